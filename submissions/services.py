"""Writes for runs: submitting a run file (alone or in a zip), validated and stored whole."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from campaign.models import Campaign, Role, Team, Track, TrackKind
from campaign.selectors import campaign_membership, track_window_refusal, track_windows
from campaign.text_fields import NOTE, text_problem
from submissions.formats.ac_run import parse_ac_run
from submissions.formats.common import Problem
from submissions.formats.control_characters import visible
from submissions.formats.pr_run import iter_pr_run
from submissions.formats.run_names import parse_run_name
from submissions.formats.trec_run import parse_rubric_run_name
from submissions.formats.upload_window import campaign_time
from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run, RunStatus
from submissions.quota import quota_standing
from submissions.rubric_runs import store_ranking_passages, store_response_passages
from submissions.selectors import pr_run_ranks, visible_pr_run_names

# --- why an upload is refused before its content is looked at (tests match exactly) ---
BAD_RUN_NAME = (
    "found run name {name!r}; expected [Team]-PG-[n] or [Team]-PO-[n] for a PR run, "
    "[Team]-AC-[n] for an AC run"
)
WRONG_TRACK = "run {name} is a{article} {kind} run; expected a name for the {track} track ({kinds})"
BAD_RUN_NUMBER = "run {name} has number {number}; expected 1 to {max_runs} in track {track}"
UNKNOWN_TEAM = "run {name} names team {team}, which is not a team of campaign {campaign}"
NOT_A_MEMBER = "you are not a participant or organiser of campaign {campaign}"
NOT_YOUR_TEAM = "run {name} belongs to team {team}; you may submit runs for team {own} only"
# A track not open yet or closed is refused in submissions.formats.upload_window's words
# (the client's too); these refuse a campaign none of whose tracks is open.
CAMPAIGN_NOT_OPEN_YET = (
    "campaign {campaign} takes runs from {opens} ({zone}, with the questions); it is {now} "
    "there now"
)
CAMPAIGN_CLOSED = (
    "every track of campaign {campaign} is closed: {tracks} ({zone}); it is {now} there "
    "now: uploads are refused"
)
TOO_LARGE = "the file is {size} bytes; the limit is {limit} bytes"
TOO_MANY_RUNS = (
    "team {team} already has {count} runs in track {track} ({names}); the limit is "
    "{max_runs}: replace one by uploading it again under its name"
)
TOO_MANY_RUNS_WITH_ZIP = (
    "team {team} would have {count} runs in track {track} with {name} and the runs before it "
    "in this upload ({names}); the limit is {max_runs}"
)
RUN_BEING_REPLACED = "run {name} was uploaded by someone else at the same moment; try again"
BAD_RUBRIC_RUN_NAME = (
    "found run name {name!r}; expected [Team]-[label] for a {kind} run of track {track}, "
    "the label of letters, digits and '_', at most 32"
)
INVALID_RUN = "{name} was not accepted: {count} problem(s) in the file; nothing was stored"

MORE_PROBLEMS = "and {count} more problem(s) of the same kinds, not listed"
# A file with every line wrong would otherwise give a report larger than the file.
MAX_REPORTED_PROBLEMS = 1000
# Records are inserted in batches: a 50 MB run never sits in memory as ORM objects.
INSERT_BATCH = 2000
HASH_CHUNK = 1 << 20


class RunRefused(Exception):
    """The upload is refused as a whole; `status` is the HTTP status that fits."""

    def __init__(self, status: int, detail: str, errors: list[dict[str, Any]] | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors if errors is not None else [{"field": "", "message": detail}]


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


def run_check_membership(*, campaign: Campaign, user: AbstractBaseUser) -> None:
    """RunRefused (403) unless `user` may submit runs to `campaign` at all, as a bulk upload
    checks before it unpacks anything."""
    membership = campaign_membership(campaign=campaign, user=user)
    if membership is None and not getattr(user, "is_superuser", False):
        raise RunRefused(403, NOT_A_MEMBER.format(campaign=campaign.slug))


def run_check_campaign_open(*, campaign: Campaign, user: AbstractBaseUser, now: datetime) -> None:
    """RunRefused (403) for what refuses any run file `user` sends to `campaign` now: no
    part in it, or no track taking participants' runs. What the API checks before it
    reads an upload's body; `run_submit` checks each run's own track again."""
    membership = campaign_membership(campaign=campaign, user=user)
    superuser = bool(getattr(user, "is_superuser", False))
    if membership is None and not superuser:
        raise RunRefused(403, NOT_A_MEMBER.format(campaign=campaign.slug))
    if superuser or (membership is not None and membership.role == Role.ORGANISER):
        return  # organisers may enter runs outside the window
    windows = track_windows(campaign=campaign, now=now)
    refusals = [window.refusal for window in windows if window.refusal is not None]
    if not windows or len(refusals) < len(windows):
        return
    if len(refusals) == 1:
        raise RunRefused(403, refusals[0])
    zone, local_now = campaign.timezone, campaign_time(now, campaign.timezone)
    if now < campaign.topics_release:  # every track opens with the questions
        raise RunRefused(403, CAMPAIGN_NOT_OPEN_YET.format(
            campaign=campaign.slug, opens=campaign_time(campaign.topics_release, zone),
            zone=zone, now=local_now))
    closed = ", ".join(f"{window.track.slug} at {window.due}" for window in windows)
    raise RunRefused(403, CAMPAIGN_CLOSED.format(campaign=campaign.slug, tracks=closed,
                                                 zone=zone, now=local_now))


def run_check_upload(
    *, track: Track, user: AbstractBaseUser, name: str, size: int, now: datetime,
    description: str = "", pending: Mapping[str, Collection[str]] | None = None,
) -> Team:
    """The run's team, or RunRefused for what `run_submit` refuses before reading a file;
    `pending` names the runs of the same zip before this one. Advisory: `run_submit` checks
    again under the team's lock."""
    team, _ = _check_rules(track=track, user=user, name=name, size=size, now=now,
                           description=description)
    _check_quota(track=track, team=team, name=name,
                 pending=(pending or {}).get(team.name, ()))
    return team


def _check_rules(
    *, track: Track, user: AbstractBaseUser, name: str, size: int, now: datetime,
    description: str = "",
) -> tuple[Team, bool]:
    """The run's team and whether the uploader organises, or RunRefused."""
    campaign = track.campaign
    # Every way in (API, pages, zip, submit_runs) passes here: the description is held to
    # the rule of every free text (docs/formats.md) before it can reach the database.
    problem = text_problem(description, what="description", line_breaks=True, cap=NOTE)
    if problem is not None:
        raise RunRefused(400, problem, [{"field": "description", "message": problem}])
    team_name = _rubric_run_team(track, name) if track.is_rubric else _r2c2_run_team(track, name)

    membership = campaign_membership(campaign=campaign, user=user)
    organiser = bool(getattr(user, "is_superuser", False)) or (
        membership is not None and membership.role == Role.ORGANISER
    )
    if membership is None and not organiser:
        raise RunRefused(403, NOT_A_MEMBER.format(campaign=campaign.slug))
    team = Team.objects.filter(campaign=campaign, name=team_name).first()
    if team is None:
        message = UNKNOWN_TEAM.format(name=name, team=team_name, campaign=campaign.slug)
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    if not organiser and (membership is None or membership.team_id != team.pk):
        own = membership.team.name if membership and membership.team else "none"
        raise RunRefused(403, NOT_YOUR_TEAM.format(name=name, team=team.name, own=own))

    # Organisers may enter runs outside the window (e.g. runs sent to them by mail).
    if not organiser:
        refusal = track_window_refusal(track=track, now=now)
        if refusal is not None:
            raise RunRefused(403, refusal)
    limit = settings.RUN_MAX_BYTES
    if size > limit:
        message = TOO_LARGE.format(size=size, limit=limit)
        raise RunRefused(413, message, [{"field": "file", "message": message}])
    return team, organiser


def _r2c2_run_team(track: Track, name: str) -> str:
    """The team a PR or AC run name names, or RunRefused."""
    run_name = parse_run_name(name)
    if run_name is None:
        raise RunRefused(400, BAD_RUN_NAME.format(name=name),
                         [{"field": "name", "message": BAD_RUN_NAME.format(name=name)}])
    if run_name.kind != track.kind:
        kinds = "[Team]-PG-[n] or [Team]-PO-[n]" if track.kind == TrackKind.PR else "[Team]-AC-[n]"
        message = WRONG_TRACK.format(
            name=name, article="n" if run_name.kind == "ac" else "", kind=run_name.kind.upper(),
            track=track.slug, kinds=kinds,
        )
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    # The highest number depends on the team's standing (refunds, grants, withdrawals):
    # `_check_quota` checks it once the team is known.
    return run_name.team


def _rubric_run_team(track: Track, name: str) -> str:
    """The team a ranking or response run name names, or RunRefused; the name has no number,
    so the quota is a count."""
    run_name = parse_rubric_run_name(name)
    if run_name is None:
        message = BAD_RUBRIC_RUN_NAME.format(name=name, kind=track.kind, track=track.slug)
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    return run_name.team


def _check_quota(
    *, track: Track, team: Team, name: str, pending: Collection[str] = ()
) -> None:
    """RunRefused unless `team` may have one more run, `name`, in `track` (a run of the
    same name is replaced, not added); its runs that do not count, and what organisers
    granted, as submissions.quota says. An R2C2 name's number is checked here too."""
    standing = quota_standing(track=track, team=team)
    why = standing.explained()
    run_name = None if track.is_rubric else parse_run_name(name)
    if run_name is not None and run_name.number > standing.highest_number:
        message = BAD_RUN_NUMBER.format(name=name, number=run_name.number,
                                        max_runs=standing.highest_number,
                                        track=track.slug) + why
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    # A run that does not count now makes no room when replaced: its new version counts.
    others = set(standing.counted) - {name}
    if len(others) >= standing.limit:
        raise RunRefused(409, TOO_MANY_RUNS.format(
            team=team.name, count=len(others), track=track.slug, names=", ".join(sorted(others)),
            max_runs=standing.limit) + why)
    with_pending = others | (set(pending) - {name})
    if len(with_pending) >= standing.limit:
        raise RunRefused(409, TOO_MANY_RUNS_WITH_ZIP.format(
            team=team.name, count=len(with_pending) + 1, track=track.slug, name=name,
            names=", ".join(sorted(with_pending)), max_runs=standing.limit) + why)


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
    team, _ = _check_rules(track=track, user=user, name=name, size=size, now=now,
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
            _check_quota(track=track, team=team, name=name)
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
