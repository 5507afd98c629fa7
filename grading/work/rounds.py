"""Rounds of grading: asking for one (a run QUEUED, in parts that any workers take), which runs a
round takes, and how it ends, graded or failed (docs/operations.md, "Asking for grading")."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from campaign.kinds import kind_of
from campaign.models import Campaign
from grading.models import GradingJob, GradingPart, PartStatus
from grading.work.claims import stale_before
from grading.work.dispatch import enqueue_scoring, send_parts_grading
from submissions.models import AnswerRecord, NuggetRecord, Run, RunStatus


def enqueue_grading(run_ids: list[int]) -> list[str]:
    """Give the runs a new round of grading, QUEUED, and send a task per part on commit; the task
    ids. A task lost on the way leaves its part QUEUED, where the reaper sends it again; a queue
    that does not answer raises `QueueUnavailable` at the commit."""
    return send_parts_grading(rounds_start(run_ids=run_ids))


def rounds_start(*, run_ids: Sequence[int]) -> list[int]:
    """A new round for each current accepted run among `run_ids` that grading takes, a run being
    graded too (its graders stop at their next beat), the run QUEUED; the parts' ids, in order."""
    now = timezone.now()
    parts: list[int] = []
    with transaction.atomic():
        runs = list(Run.objects.filter(pk__in=run_ids).of_kinds(graded=True)
                    .current().accepted().select_related("track").order_by("pk"))
        for run in runs:
            job = _round_renewed(run_id=run.pk, now=now)
            GradingPart.objects.bulk_create(_planned_parts(job=job, run=run, now=now))
            parts += job.parts.order_by("number").values_list("pk", flat=True)
        Run.objects.filter(pk__in=[run.pk for run in runs]).update(status=RunStatus.QUEUED)
    return parts


def round_take(*, run_id: int, token: str) -> GradingPart | None:
    """A new round of one part for a run, claimed at once by `token`: the `grade` command grades in
    its own process, never in chunks. None if a live task holds a part of the run's round."""
    now = timezone.now()
    with transaction.atomic():
        run = (Run.objects.filter(pk=run_id).of_kinds(graded=True)
               .current().accepted().first())
        busy = GradingPart.objects.filter(job__run_id=run_id, status=PartStatus.GRADING,
                                          heartbeat__gte=stale_before(now)).exclude(token=token)
        if run is None or busy.exists():
            return None
        job = _round_renewed(run_id=run_id, now=now)
        part = GradingPart.objects.create(job=job, number=1, status=PartStatus.GRADING,
                                          token=token, heartbeat=now)
        Run.objects.filter(pk=run_id).update(status=RunStatus.GRADING, failure_reason="")
    return GradingPart.objects.select_related("job__run__track__campaign").get(pk=part.pk)


def _round_renewed(*, run_id: int, now: datetime) -> GradingJob:
    """The run's job under a new round, without parts: the old round's graders find it gone."""
    fields: dict[str, Any] = {"round": uuid.uuid4().hex, "heartbeat": now}
    # The round's row first, as every grading write: one lock order with the graders.
    if not GradingJob.objects.filter(run_id=run_id).update(**fields):
        GradingJob.objects.bulk_create([GradingJob(run_id=run_id, **fields)],
                                       ignore_conflicts=True)
        GradingJob.objects.filter(run_id=run_id).update(**fields)  # another's, at once
    job = GradingJob.objects.get(run_id=run_id)
    job.parts.all().delete()
    return job


def _planned_parts(*, job: GradingJob, run: Run, now: datetime) -> list[GradingPart]:
    """An AC run above GRADING_CHUNK_NUGGETS nugget records in chunks of whole questions; any
    other run in one part (docs/operations.md, "Large runs in chunks")."""
    counts = _nugget_counts(run) if kind_of(run.track.kind).in_parts else {}
    plan = _chunks(run, counts, size=settings.GRADING_CHUNK_NUGGETS) if counts else [[]]
    if len(plan) == 1:
        return [GradingPart(job=job, number=1, heartbeat=now)]
    return [GradingPart(job=job, number=number, qids=qids, heartbeat=now,
                        nuggets=sum(counts.get(qid, 0) for qid in qids))
            for number, qids in enumerate(plan, start=1)]


def _nugget_counts(run: Run) -> dict[str, int]:
    return dict(NuggetRecord.objects.filter(run=run).order_by().values("qid")
                .annotate(n=Count("id")).values_list("qid", "n"))


def chunk_plan(*, run: Run, size: int) -> list[list[str]]:
    """The run's questions in chunks of at most `size` nugget records (a question with
    more is a chunk of its own), in qID order; one chunk if the run fits in one."""
    return _chunks(run, _nugget_counts(run), size=size)


def _chunks(run: Run, nuggets: dict[str, int], *, size: int) -> list[list[str]]:
    answered = AnswerRecord.objects.filter(run=run).values_list("qid", flat=True)
    plan: list[list[str]] = [[]]
    filled = 0
    for qid in sorted(set(nuggets) | set(answered)):
        count = nuggets.get(qid, 0)
        if plan[-1] and filled + count > size:
            plan.append([])
            filled = 0
        plan[-1].append(qid)
        filled += count
    return plan


FAILED_WITHOUT_MESSAGE = ("grading failed on an error that gave no message; the "
                          "organisers find the details in the grading log")


def round_fail(*, part: GradingPart, round: str, seen: dict[str, Any], reason: str) -> bool:
    """End `part`'s round FAILED with `reason`, if the round is still `round` and the part still
    as `seen`: the run FAILED, and its other parts' graders stop. Whether it did."""
    now = timezone.now()
    with transaction.atomic():
        if not GradingJob.objects.filter(pk=part.job_id, round=round).update(round="",
                                                                              heartbeat=now):
            return False
        if not GradingPart.objects.filter(pk=part.pk, **seen).update(status=PartStatus.FAILED):
            transaction.set_rollback(True)
            return False
        Run.objects.filter(pk=part.job.run_id, status__in=RunStatus.IN_GRADING).update(
            status=RunStatus.FAILED, graded_at=now,
            failure_reason=reason if reason.strip() else FAILED_WITHOUT_MESSAGE)
    return True


def part_fail(*, part: GradingPart, token: str, reason: str) -> bool:
    """End the round of a part `token` grades FAILED with `reason` (`round_fail`)."""
    return round_fail(part=part, round=part.job.round, reason=reason,
                      seen={"token": token, "status": PartStatus.GRADING})


def part_graded(*, part: GradingPart, calls: int, needs_review: int, worker: str = "") -> bool:
    """Mark `part` GRADED, inside its claim's transaction; the run GRADED too if none of its round
    is left. Whether it was (the round's row is locked: parts ending together take turns)."""
    GradingPart.objects.filter(pk=part.pk).update(
        status=PartStatus.GRADED, graded_by=worker[:200], judge_calls=calls,
        needs_review=needs_review)
    if GradingPart.objects.filter(job_id=part.job_id).exclude(status=PartStatus.GRADED).exists():
        return False
    Run.objects.filter(pk=part.job.run_id, status=RunStatus.GRADING).update(
        status=RunStatus.GRADED, graded_at=timezone.now(), failure_reason="")
    return True


def round_end_scoring(*, run: Run) -> str | None:
    """Queue scoring if no current run of `run`'s campaign is QUEUED or GRADING anymore
    (`run` was the last of a round of grading); the scoring task's id, or None."""
    campaign_id = run.track.campaign_id
    if Run.objects.filter(track__campaign_id=campaign_id).current().in_grading().exists():
        return None
    return enqueue_scoring(campaign_id)


def campaign_grading_queue(*, campaign: Campaign, include_graded: bool = False) -> list[int]:
    """The runs to grade, withdrawn ones left out: new, queued and failed ones, those whose round
    went silent, and graded ones when asked (docs/operations.md, "Asking for grading")."""
    statuses = RunStatus.AWAITING_GRADING | (RunStatus.JUDGED if include_graded else frozenset())
    silent = Q(status=RunStatus.GRADING) & (
        Q(grading_job__isnull=True) | Q(grading_job__heartbeat__lt=stale_before(timezone.now())))
    return list(
        Run.objects.filter(track__campaign=campaign).of_kinds(graded=True)
        .current().not_withdrawn().filter(Q(status__in=statuses) | silent)
        .order_by("pk").values_list("pk", flat=True)
    )
