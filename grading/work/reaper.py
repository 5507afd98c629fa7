"""The reaper: grading that went silent is queued again, or failed with the reason, by
conditional UPDATEs safe beside live grading (docs/operations.md, "The reaper")."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from grading.models import ChunkStatus, GradingChunk, WorkerHeartbeat
from grading.selectors import GRADED_TRACK_KINDS
from grading.setup import official_model_name
from grading.validation.services import grading_refusal
from grading.work.dispatch import enqueue_chunk_grading, send_run_regrading
from infrastructure.queueing import QueueUnavailable
from submissions.models import Run, RunStatus

logger = logging.getLogger(__name__)

#: The reason a run is FAILED with when its worker kept going silent.
WORKER_SILENT = (
    "its worker went silent {times} times: grading was re-queued {requeues} time(s) "
    "(GRADING_MAX_REQUEUES) and stopped again each time; last heartbeat at {heartbeat}, "
    "no sign of life for over {stale} s. Ask for grading again once the workers are "
    "healthy (the organisers' stall list shows their heartbeats)"
)
#: ... when the task sent for it kept being lost before any worker took it.
TASK_LOST = (
    "its grading task was lost {times} times: sent again {requeues} time(s) "
    "(GRADING_MAX_REQUEUES), it was still queued (since {heartbeat}) while the workers "
    "listening on the grading queue were idle for over {stale} s. Check the broker, then "
    "ask for grading again"
)
#: ... when a chunk of it did (a large run is graded in chunks, grading.work.chunks).
CHUNK_FAILED = "chunk {number} of {chunks} (questions {first} to {last}): {reason}"

#: Worker heartbeats silent this long are forgotten.
FORGET_WORKERS_AFTER = timedelta(days=7)


@dataclass
class ReapReport:
    """What one pass of the reaper did, by run or chunk id."""

    requeued_runs: list[int] = field(default_factory=list)
    resent_runs: list[int] = field(default_factory=list)  # QUEUED, task lost
    failed_runs: list[int] = field(default_factory=list)
    requeued_chunks: list[int] = field(default_factory=list)
    resent_chunks: list[int] = field(default_factory=list)
    failed_chunks: list[int] = field(default_factory=list)
    not_sent: list[str] = field(default_factory=list)  # the broker did not answer

    @property
    def changed(self) -> bool:
        return any((self.requeued_runs, self.resent_runs, self.failed_runs,
                    self.requeued_chunks, self.resent_chunks, self.failed_chunks))


@dataclass(frozen=True)
class _Limits:
    now: datetime
    stale: datetime  # a heartbeat before this is silence
    stale_seconds: int
    max_requeues: int


def grading_reap(*, now: datetime | None = None) -> ReapReport:
    """Re-queue or fail the grading that went silent (docs/operations.md, "The reaper"); what it
    did. Safe to run at any time, twice at once, and beside live grading."""
    now = now or timezone.now()
    limits = _Limits(now=now, stale=now - timedelta(seconds=settings.GRADING_STALE_SECONDS),
                     stale_seconds=settings.GRADING_STALE_SECONDS,
                     max_requeues=settings.GRADING_MAX_REQUEUES)
    report = ReapReport()
    _reap_silent_runs(limits, report)
    _reap_silent_chunks(limits, report)
    # Judged after the two above: a run or chunk just re-queued has a fresh queue time.
    if _workers_idle_on_grading(limits):
        _resend_lost_runs(limits, report)
        _resend_lost_chunks(limits, report)
    WorkerHeartbeat.objects.filter(last_beat__lt=now - FORGET_WORKERS_AFTER).delete()
    return report


def _when(moment: datetime | None) -> str:
    return "never" if moment is None else f"{moment:%Y-%m-%d %H:%M:%S} UTC"


# --- runs -----------------------------------------------------------------------------
def _chunked_round() -> Exists:
    """The run is in a round graded in chunks: the chunks' claims say who is silent."""
    return Exists(GradingChunk.objects.filter(run=OuterRef("pk"), round=OuterRef("grading_token")))


def _reap_silent_runs(limits: _Limits, report: ReapReport) -> None:
    silent = (Run.objects.filter(status=RunStatus.GRADING, track__kind__in=GRADED_TRACK_KINDS)
              .filter(Q(grading_heartbeat__lt=limits.stale) | Q(grading_heartbeat__isnull=True))
              .exclude(_chunked_round())
              .values_list("pk", "grading_token", "grading_heartbeat", "grading_requeues"))
    for run_id, token, heartbeat, requeues in silent:
        seen = Run.objects.filter(pk=run_id, status=RunStatus.GRADING, grading_token=token,
                                  grading_heartbeat=heartbeat)
        _settle_run(seen, run_id=run_id, requeues=requeues, heartbeat=heartbeat,
                    limits=limits, report=report, into=report.requeued_runs,
                    reason=WORKER_SILENT,
                    news=f"re-queued: no heartbeat since {_when(heartbeat)}")


def _resend_lost_runs(limits: _Limits, report: ReapReport) -> None:
    lost = (Run.objects.filter(status=RunStatus.QUEUED, track__kind__in=GRADED_TRACK_KINDS)
            .current()
            .filter(Q(grading_heartbeat__lt=limits.stale) | Q(grading_heartbeat__isnull=True))
            .values_list("pk", "grading_heartbeat", "grading_requeues", "track__campaign"))
    refused: dict[int, bool] = {}
    for run_id, queued_at, requeues, campaign_id in lost:
        if campaign_id not in refused:
            refused[campaign_id] = _grading_refused(campaign_id)
        if refused[campaign_id]:
            continue  # QUEUED on purpose until the judge passes its validation
        seen = Run.objects.filter(pk=run_id, status=RunStatus.QUEUED,
                                  grading_heartbeat=queued_at)
        _settle_run(seen, run_id=run_id, requeues=requeues, heartbeat=queued_at,
                    limits=limits, report=report, into=report.resent_runs, reason=TASK_LOST,
                    news=f"queued since {_when(queued_at)} with idle workers: its task "
                         "was sent again")


def _settle_run(seen: QuerySet[Run], *, run_id: int, requeues: int,
                heartbeat: datetime | None, limits: _Limits, report: ReapReport,
                into: list[int], reason: str, news: str) -> None:
    """FAILED once re-queued GRADING_MAX_REQUEUES times (`reason`, a template of the
    reaper's, filled in), else QUEUED again (its id added to `into`, the log saying
    `news`); nothing if `seen` no longer holds."""
    if requeues >= limits.max_requeues:
        filled = _filled(reason, requeues=requeues, heartbeat=heartbeat, limits=limits)
        if _fail(seen, reason=filled, now=limits.now):
            report.failed_runs.append(run_id)
            logger.error("run %s FAILED: %s", run_id, filled)
    elif _requeue_run(seen, run_id=run_id, now=limits.now, report=report):
        into.append(run_id)
        logger.warning("run %s %s (%s of %s)", run_id, news, requeues + 1,
                       limits.max_requeues)


def _filled(reason: str, *, requeues: int, heartbeat: datetime | None,
            limits: _Limits) -> str:
    """The reason a run or chunk failed, for the team: `reason` (WORKER_SILENT or
    TASK_LOST) filled in."""
    return reason.format(times=requeues + 1, requeues=requeues, heartbeat=_when(heartbeat),
                         stale=limits.stale_seconds)


def _grading_refused(campaign_id: int) -> bool:
    from campaign.models import Campaign

    campaign = Campaign.objects.get(pk=campaign_id)
    return bool(grading_refusal(campaign=campaign, judge_model=official_model_name()))


def _requeue_run(seen: QuerySet[Run], *, run_id: int, now: datetime,
                 report: ReapReport) -> bool:
    """QUEUED again (the claim's token cleared: its grader, if alive, stops at its next
    beat) and a new task sent once that is committed; whether this reaper did it."""
    try:
        with transaction.atomic():
            if not seen.update(status=RunStatus.QUEUED, grading_token="",
                               grading_heartbeat=now,
                               grading_requeues=F("grading_requeues") + 1):
                return False
            send_run_regrading(run_id)
    except QueueUnavailable as down:
        # Committed: the run is QUEUED, and is sent again once the broker answers.
        report.not_sent.append(f"run {run_id}: {down.detail}")
    return True


def _fail(seen: QuerySet[Run], *, reason: str, now: datetime) -> bool:
    return bool(seen.update(status=RunStatus.FAILED, grading_token="", graded_at=now,
                            failure_reason=reason))


# --- chunks -----------------------------------------------------------------------------
def _chunks_of_live_rounds() -> QuerySet[GradingChunk]:
    # A chunk grades only while its run is GRADING under the chunk's round.
    return GradingChunk.objects.filter(run__status=RunStatus.GRADING,
                                       run__grading_token=F("round"))


def _reap_silent_chunks(limits: _Limits, report: ReapReport) -> None:
    silent = (_chunks_of_live_rounds().filter(status=ChunkStatus.GRADING)
              .filter(Q(heartbeat__lt=limits.stale) | Q(heartbeat__isnull=True))
              .select_related("run"))
    for chunk in silent:
        seen = GradingChunk.objects.filter(pk=chunk.pk, status=ChunkStatus.GRADING,
                                           token=chunk.token, heartbeat=chunk.heartbeat)
        _settle_chunk(seen, chunk=chunk, limits=limits, report=report,
                      into=report.requeued_chunks, reason=WORKER_SILENT,
                      news=f"re-queued: no heartbeat since {_when(chunk.heartbeat)}")


def _resend_lost_chunks(limits: _Limits, report: ReapReport) -> None:
    lost = (_chunks_of_live_rounds().filter(status=ChunkStatus.QUEUED)
            .filter(Q(heartbeat__lt=limits.stale) | Q(heartbeat__isnull=True))
            .select_related("run"))
    for chunk in lost:
        seen = GradingChunk.objects.filter(pk=chunk.pk, status=ChunkStatus.QUEUED,
                                           heartbeat=chunk.heartbeat)
        _settle_chunk(seen, chunk=chunk, limits=limits, report=report,
                      into=report.resent_chunks, reason=TASK_LOST,
                      news=f"queued since {_when(chunk.heartbeat)} with idle workers: its "
                           "task was sent again")


def _settle_chunk(seen: QuerySet[GradingChunk], *, chunk: GradingChunk, limits: _Limits,
                  report: ReapReport, into: list[int], reason: str, news: str) -> None:
    """FAILED, with its run, once re-queued GRADING_MAX_REQUEUES times (`reason`, a
    template of the reaper's, filled in), else QUEUED again (its id added to `into`, the
    log saying `news`); nothing if `seen` no longer holds."""
    if chunk.requeues >= limits.max_requeues:
        filled = _filled(reason, requeues=chunk.requeues, heartbeat=chunk.heartbeat,
                         limits=limits)
        if _fail_chunk(seen, chunk=chunk, reason=filled, now=limits.now):
            report.failed_chunks.append(chunk.pk)
            report.failed_runs.append(chunk.run_id)
    elif _requeue_chunk(seen, chunk_id=chunk.pk, now=limits.now, report=report):
        into.append(chunk.pk)
        logger.warning("chunk %s of run %s %s (%s of %s)", chunk.pk, chunk.run_id, news,
                       chunk.requeues + 1, limits.max_requeues)


def _requeue_chunk(seen: QuerySet[GradingChunk], *, chunk_id: int, now: datetime,
                   report: ReapReport) -> bool:
    try:
        with transaction.atomic():
            # `heartbeat` of a QUEUED chunk is when it was queued (grading.work.chunks).
            if not seen.update(status=ChunkStatus.QUEUED, token="", heartbeat=now,
                               requeues=F("requeues") + 1):
                return False
            enqueue_chunk_grading([chunk_id])
    except QueueUnavailable as down:
        report.not_sent.append(f"chunk {chunk_id}: {down.detail}")
    return True


def _fail_chunk(seen: QuerySet[GradingChunk], *, chunk: GradingChunk, reason: str,
                now: datetime) -> bool:
    """The chunk FAILED, and its run with it (the other chunks of the round then stop)."""
    chunks = GradingChunk.objects.filter(run_id=chunk.run_id, round=chunk.round).count()
    qids = chunk.qids or ["?"]
    run_reason = CHUNK_FAILED.format(number=chunk.number, chunks=chunks, first=qids[0],
                                     last=qids[-1], reason=reason)
    with transaction.atomic():
        # The run's row first, as everywhere in grading.work.chunks: one lock order.
        run_failed = _fail(Run.objects.filter(pk=chunk.run_id, status=RunStatus.GRADING,
                                              grading_token=chunk.round),
                           reason=run_reason, now=now)
        if not run_failed or not seen.update(status=ChunkStatus.FAILED):
            transaction.set_rollback(True)
            return False
    logger.error("run %s FAILED: %s", chunk.run_id, run_reason)
    return True


# --- is anyone grading? -------------------------------------------------------------------
def _workers_idle_on_grading(limits: _Limits) -> bool:
    """Whether a task QUEUED before the stale limit must have been lost: a worker listening on the
    grading queue has been up since before it and still beats, and nothing has a fresh heartbeat."""
    listening = any(
        settings.GRADING_QUEUE in worker.queue_names
        for worker in WorkerHeartbeat.objects.filter(
            last_beat__gte=limits.stale, started_at__lte=limits.stale, stopped_at__isnull=True)
    )
    if not listening:
        return False
    runs_busy = Run.objects.filter(status=RunStatus.GRADING,
                                   grading_heartbeat__gte=limits.stale).exists()
    chunks_busy = GradingChunk.objects.filter(status=ChunkStatus.GRADING,
                                              heartbeat__gte=limits.stale).exists()
    return not runs_busy and not chunks_busy
