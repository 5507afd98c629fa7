"""Writes for submissions: `run_submit` stores a run and its records in one transaction, or
nothing, once every check has passed (docs/submissions.md)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from campaign.kinds import behaviour, kind_of
from campaign.models import Team, Track
from submissions.checks import RunRefused, check_quota, check_rules
from submissions.formats.common import Problem
from submissions.formats.control_characters import visible
from submissions.models import Run, RunStatus
from submissions.stores import Storing, VisiblePrRuns

RUN_BEING_REPLACED = "run {name} was uploaded by someone else at the same moment; try again"
INVALID_RUN = "{name} was not accepted: {count} problem(s) in the file; nothing was stored"
MORE_PROBLEMS = "and {count} more problem(s) of the same kinds, not listed"
# A file with every line wrong would otherwise give a report larger than the file.
MAX_REPORTED_PROBLEMS = 1000
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


def _problem_dicts(problems: list[Problem]) -> list[dict[str, Any]]:
    # The report is stored as JSON, which PostgreSQL refuses with a NUL in it: a message
    # that quotes a value shows its control characters escaped.
    report = [{"line": p.line, "field": p.field, "message": visible(p.message)}
              for p in problems[:MAX_REPORTED_PROBLEMS]]
    if len(problems) > MAX_REPORTED_PROBLEMS:
        report.append({"line": 0, "field": "file", "message": MORE_PROBLEMS.format(
            count=len(problems) - MAX_REPORTED_PROBLEMS)})
    return report


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
            store = behaviour(kind_of(track.kind).store)
            problems = store(Storing(run=run, file=reader, known_qids=known_qids,
                                     shared=VisiblePrRuns(track=track, team=team, now=now)))
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
