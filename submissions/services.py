"""Writes for submissions: `run_submit` stores a run and its records in one transaction, or
nothing, once every check has passed (docs/submissions.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from campaign.models import Team, Track, TrackKind
from submissions.checks import RunRefused, check_quota, check_rules
from submissions.formats.ac_run import parse_ac_run
from submissions.formats.common import Problem
from submissions.formats.control_characters import visible
from submissions.formats.pr_run import iter_pr_run
from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run, RunStatus
from submissions.rubric_runs import store_ranking_passages, store_response_passages
from submissions.selectors import pr_run_ranks, visible_pr_run_names

RUN_BEING_REPLACED = "run {name} was uploaded by someone else at the same moment; try again"
INVALID_RUN = "{name} was not accepted: {count} problem(s) in the file; nothing was stored"
MORE_PROBLEMS = "and {count} more problem(s) of the same kinds, not listed"
# A file with every line wrong would otherwise give a report larger than the file.
MAX_REPORTED_PROBLEMS = 1000
# Records are inserted in batches: a 50 MB run never sits in memory as ORM objects.
INSERT_BATCH = 2000
HASH_CHUNK = 1 << 20


class _Rejected(Exception):
    """Raised inside the transaction to roll back a file that did not validate."""


@dataclass
class _HashingReader:
    """Reads through to `file`, hashing and counting every byte on the way."""

    file: IO[bytes]
    size: int = 0

    def __post_init__(self) -> None:
        self.digest = hashlib.sha256()

    def read(self, n: int = -1, /) -> bytes:
        data = self.file.read(n)
        self.digest.update(data)
        self.size += len(data)
        return data


class _VisiblePrRuns(Mapping[str, Mapping[str, frozenset[int]]]):
    """The PR runs an AC run may cite: names from one query, a run's ranks loaded only when it
    is cited."""

    def __init__(self, *, track: Track, team: Team, now: datetime) -> None:
        self._names = visible_pr_run_names(campaign=track.campaign, team=team, now=now)
        self._ranks: dict[str, Mapping[str, frozenset[int]]] = {}

    def __getitem__(self, name: str) -> Mapping[str, frozenset[int]]:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._ranks:
            self._ranks[name] = pr_run_ranks(run_id=self._names[name])
        return self._ranks[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)


def _problem_dicts(problems: list[Problem]) -> list[dict[str, Any]]:
    # The report is stored as JSON, which PostgreSQL refuses with a NUL in it: a message
    # that quotes a value shows its control characters escaped.
    report = [{"line": p.line, "field": p.field, "message": visible(p.message)}
              for p in problems[:MAX_REPORTED_PROBLEMS]]
    if len(problems) > MAX_REPORTED_PROBLEMS:
        report.append({"line": 0, "field": "file", "message": MORE_PROBLEMS.format(
            count=len(problems) - MAX_REPORTED_PROBLEMS)})
    return report


def _store_pr_records(run: Run, reader: _HashingReader, known_qids: set[str]) -> list[Problem]:
    problems: list[Problem] = []
    batch: list[PassageRecord] = []
    qids: set[str] = set()
    count = 0
    for record in iter_pr_run(reader, problems, known_qids=known_qids,
                              max_passage_chars=settings.MAX_PASSAGE_CHARS):
        if problems:
            continue  # the run will be rejected: stop building rows, keep finding problems
        batch.append(PassageRecord(run=run, qid=record.qid, rank=record.rank,
                                   doc_id=record.doc_id, text=record.text))
        qids.add(record.qid)
        if len(batch) >= INSERT_BATCH:
            PassageRecord.objects.bulk_create(batch)
            count += len(batch)
            batch = []
    if not problems:
        PassageRecord.objects.bulk_create(batch)
        run.questions, run.records = len(qids), count + len(batch)
    return problems


def _store_ac_records(
    run: Run, reader: _HashingReader, known_qids: set[str], shared: _VisiblePrRuns
) -> list[Problem]:
    result = parse_ac_run(reader, known_qids=known_qids, shared_pr_runs=shared,
                          max_answer_chars=settings.MAX_ANSWER_CHARS)
    if result.problems:
        return result.problems
    answers = AnswerRecord.objects.bulk_create(
        AnswerRecord(run=run, qid=a.qid, answer=a.answer, confidence=a.confidence)
        for a in result.records
    )
    NuggetRecord.objects.bulk_create(
        (
            NuggetRecord(answer=row, run=run, qid=a.qid, nugget_num=n.nugget_num,
                         pr_run_name=n.passage_key.run_name, passage_rank=n.passage_key.rank,
                         text=n.text)
            for row, a in zip(answers, result.records, strict=True)
            for n in a.nuggets
        ),
        batch_size=INSERT_BATCH,
    )
    run.questions = len(result.records)
    run.records = sum(len(a.nuggets) for a in result.records)
    return []


def run_submit(
    *,
    track: Track,
    user: AbstractBaseUser,
    name: str,
    file: IO[bytes],
    size: int,
    filename: str = "",
    description: str = "",
    now: datetime | None = None,
) -> Run:
    """Validate a run file and store it whole as its name's current version, or store nothing:
    a refused upload leaves no trace, an invalid file only its report (docs/submissions.md)."""
    now = now or timezone.now()
    team, _ = check_rules(track=track, user=user, name=name, size=size, now=now,
                           description=description)
    campaign = track.campaign
    known_qids = set(campaign.questions.values_list("qid", flat=True))
    reader = _HashingReader(file)
    stored_name = ""
    problems: list[Problem] = []
    try:
        with transaction.atomic():
            # One upload per team at a time: the quota and "current version" stay true.
            Team.objects.select_for_update().get(pk=team.pk)
            check_quota(track=track, team=team, name=name)
            run = Run(track=track, team=team, name=name, description=description,
                      original_filename=filename[:255], uploaded_by_id=user.pk,
                      status=RunStatus.RECEIVED, sha256="", size=0)
            run.save()
            if track.kind == TrackKind.PR:
                problems = _store_pr_records(run, reader, known_qids)
            elif track.kind == TrackKind.RANKING:
                problems = store_ranking_passages(run, reader, campaign=campaign,
                                                  known_qids=known_qids)
            elif track.kind == TrackKind.RESPONSE:
                problems = store_response_passages(run, reader, known_qids=known_qids)
            else:
                shared = _VisiblePrRuns(track=track, team=team, now=now)
                problems = _store_ac_records(run, reader, known_qids, shared)
            _drain(reader)
            if problems:
                raise _Rejected
            run.sha256, run.size = reader.digest.hexdigest(), reader.size
            file.seek(0)
            run.file.save(filename or name, File(file), save=False)
            stored_name = run.file.name or ""
            Run.objects.filter(track=track, name=name).current().update(
                is_current=False, replaced_at=now)
            run.status, run.is_current = RunStatus.VALID, True
            run.save()
    except _Rejected:
        run = Run.objects.create(
            track=track, team=team, name=name, description=description,
            original_filename=filename[:255], uploaded_by_id=user.pk, status=RunStatus.INVALID,
            sha256=reader.digest.hexdigest(), size=reader.size,
            validation_report=_problem_dicts(problems),
        )
    except IntegrityError:
        _delete_file(stored_name)
        raise RunRefused(409, RUN_BEING_REPLACED.format(name=name)) from None
    except BaseException:
        _delete_file(stored_name)  # the database rolled back; the file must go too
        raise
    return run


def _drain(reader: _HashingReader) -> None:
    # A parser may stop early on a hopeless file; the hash must cover every byte.
    while reader.read(HASH_CHUNK):
        pass


def _delete_file(name: str) -> None:
    if name:
        from django.core.files.storage import default_storage

        default_storage.delete(name)
