"""The reaper: grading that went silent is queued again, or failed with the reason, by
conditional UPDATEs safe beside live grading (docs/operations.md, "The reaper")."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from campaign.models import Campaign
from grading.models import GradingJob, GradingPart, PartStatus, WorkerHeartbeat
from grading.setup import official_model_name
from grading.validation.services import grading_refusal
from grading.work.claims import stale_before
from grading.work.dispatch import send_part_regrading
from grading.work.rounds import round_fail
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
#: ... when a chunk of it did (a large AC run is graded in parts, grading.work.rounds).
CHUNK_FAILED = "chunk {number} of {chunks} (questions {first} to {last}): {reason}"

#: Worker heartbeats silent this long are forgotten.
FORGET_WORKERS_AFTER = timedelta(days=7)


@dataclass
class ReapReport:
    """What one pass of the reaper did, by part id (a run's failure by run id)."""

    requeued: list[int] = field(default_factory=list)  # GRADING, its worker silent
    resent: list[int] = field(default_factory=list)  # QUEUED, its task lost
    failed: list[int] = field(default_factory=list)
    failed_runs: list[int] = field(default_factory=list)
    not_sent: list[str] = field(default_factory=list)  # the broker did not answer

    @property
    def changed(self) -> bool:
        return any((self.requeued, self.resent, self.failed))


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
    limits = _Limits(now=now, stale=stale_before(now),
                     stale_seconds=settings.GRADING_STALE_SECONDS,
                     max_requeues=settings.GRADING_MAX_REQUEUES)
    report = ReapReport()
    for part in _live_parts().filter(status=PartStatus.GRADING, heartbeat__lt=limits.stale):
        _settle(part, seen={"status": PartStatus.GRADING, "token": part.token},
                limits=limits, report=report, into=report.requeued, reason=WORKER_SILENT,
                news=f"re-queued: no heartbeat since {_when(part.heartbeat)}")
    # Judged after the above: a part just re-queued has a fresh queue time.
    if _workers_idle_on_grading(limits):
        _resend_lost(limits, report)
    WorkerHeartbeat.objects.filter(last_beat__lt=now - FORGET_WORKERS_AFTER).delete()
    return report


def _when(moment: datetime | None) -> str:
    return "never" if moment is None else f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def _live_parts() -> QuerySet[GradingPart]:
    """Parts of rounds still on: the round not ended, the run QUEUED or GRADING."""
    return (GradingPart.objects.exclude(job__round="")
            .filter(job__run__status__in=RunStatus.IN_GRADING)
            .select_related("job__run").order_by("pk"))


def _resend_lost(limits: _Limits, report: ReapReport) -> None:
    lost = _live_parts().filter(status=PartStatus.QUEUED, heartbeat__lt=limits.stale,
                                job__run__is_current=True)
    refused: dict[int, bool] = {}
    for part in lost.select_related("job__run__track"):
        campaign_id = part.job.run.track.campaign_id
        if campaign_id not in refused:
            refused[campaign_id] = bool(grading_refusal(
                campaign=Campaign.objects.get(pk=campaign_id),
                judge_model=official_model_name()))
        if refused[campaign_id]:
            continue  # QUEUED on purpose until the judge passes its validation
        _settle(part, seen={"status": PartStatus.QUEUED}, limits=limits, report=report,
                into=report.resent, reason=TASK_LOST,
                news=f"queued since {_when(part.heartbeat)} with idle workers: its task "
                     "was sent again")


def _settle(part: GradingPart, *, seen: dict[str, object], limits: _Limits,
            report: ReapReport, into: list[int], reason: str, news: str) -> None:
    """FAILED, with its run, once re-queued GRADING_MAX_REQUEUES times (`reason`, a template of
    the reaper's, filled in), else QUEUED again with a new task (its id added to `into`, the log
    saying `news`); nothing if the part is no longer as `seen` when it was read."""
    seen = {**seen, "heartbeat": part.heartbeat}
    run_id = part.job.run_id
    if part.requeues >= limits.max_requeues:
        filled = _in_part(part, reason.format(
            times=part.requeues + 1, requeues=part.requeues, heartbeat=_when(part.heartbeat),
            stale=limits.stale_seconds))
        if round_fail(part=part, round=part.job.round, seen=seen, reason=filled):
            report.failed.append(part.pk)
            report.failed_runs.append(run_id)
            logger.error("run %s FAILED: %s", run_id, filled)
    elif _requeue(part, seen=seen, now=limits.now, report=report):
        into.append(part.pk)
        logger.warning("part %s of run %s %s (%s of %s)", part.number, run_id, news,
                       part.requeues + 1, limits.max_requeues)


def _in_part(part: GradingPart, reason: str) -> str:
    """The reason a run failed, naming the part when it has several."""
    parts = GradingPart.objects.filter(job_id=part.job_id).count()
    if parts == 1:
        return reason
    qids = part.qids or ["?"]
    return CHUNK_FAILED.format(number=part.number, chunks=parts, first=qids[0], last=qids[-1],
                               reason=reason)


def _requeue(part: GradingPart, *, seen: dict[str, object], now: datetime,
             report: ReapReport) -> bool:
    """QUEUED again (the claim's token cleared: its grader, if alive, stops at its next beat)
    and a new task sent once that is committed; whether this reaper did it."""
    try:
        with transaction.atomic():
            # The round's row first, as every grading write: one lock order.
            if not GradingJob.objects.filter(pk=part.job_id, round=part.job.round).update(
                    heartbeat=now):
                return False
            if not GradingPart.objects.filter(pk=part.pk, **seen).update(
                    status=PartStatus.QUEUED, token="", heartbeat=now,
                    requeues=F("requeues") + 1):
                transaction.set_rollback(True)
                return False
            if not GradingPart.objects.filter(job_id=part.job_id,
                                              status=PartStatus.GRADING).exists():
                Run.objects.filter(pk=part.job.run_id, status=RunStatus.GRADING).update(
                    status=RunStatus.QUEUED)
            send_part_regrading(part.pk)
    except QueueUnavailable as down:
        # Committed: the part is QUEUED, and is sent again once the broker answers.
        report.not_sent.append(f"part {part.number} of run {part.job.run_id}: {down.detail}")
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
    return not GradingPart.objects.filter(status=PartStatus.GRADING,
                                          heartbeat__gte=limits.stale).exists()
