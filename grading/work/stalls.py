"""Reads for the organisers' stall list: runs not done yet, oldest in their state first, and the
workers' pulse (docs/operations.md, "The stall list")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from campaign.kinds import kinds
from campaign.models import Campaign
from grading.models import GradingPart, PartStatus, WorkerHeartbeat
from grading.work.claims import stale_before
from submissions.models import Run, RunStatus

#: What each state that is not an end waits for (a PR run ends VALID: it is never graded).
WAITING_FOR = {
    RunStatus.RECEIVED: "validation",
    RunStatus.VALID: "an organiser to ask for grading",
    RunStatus.QUEUED: "a worker to take it",
    RunStatus.GRADING: "its worker to finish",
    RunStatus.GRADED: "scoring",
}


def age_text(age: timedelta) -> str:
    """An age as people read it on a status page: "45 s", "12 min", "3 h 05 min", "2 d 4 h"."""
    seconds = int(age.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours == 0:
        return f"{minutes} min"
    if days == 0:
        return f"{hours} h {minutes % 60:02d} min"
    return f"{days} d {hours % 24} h"


@dataclass(frozen=True)
class RunInState:
    """A current run that has not reached an end, with how long it has been there."""

    run: Run
    since: datetime  # when it entered its state; in grading: its round's last sign of life
    age: timedelta
    waiting_for: str
    silent: bool  # QUEUED or GRADING with no sign of life for GRADING_STALE_SECONDS
    heartbeat: datetime | None = None  # in grading: its round's last sign of life
    requeues: int = 0  # how often the reaper queued its round's parts again
    chunks: str = ""  # a run graded in chunks: "2/5 chunks graded"

    @property
    def age_text(self) -> str:
        return age_text(self.age)


def runs_not_done(*, campaign: Campaign, now: datetime | None = None) -> list[RunInState]:
    """The campaign's current runs not at an end (INVALID, SCORED, FAILED, a PR run's VALID),
    oldest in their state first; a run in grading is dated by its round's last sign of life."""
    now = now or timezone.now()
    stale = stale_before(now)
    waiting = (Q(status__in=[RunStatus.RECEIVED, RunStatus.QUEUED, RunStatus.GRADING,
                             RunStatus.GRADED])
               | Q(status=RunStatus.VALID, track__kind__in=kinds(graded=True)))
    runs = (Run.objects.filter(waiting, track__campaign=campaign).current()
            .select_related("team", "track", "grading_job"))
    parts = _parts_of_rounds(runs)
    rows = []
    for run in runs:
        in_grading = run.status in RunStatus.IN_GRADING
        job = getattr(run, "grading_job", None)
        heartbeat = job.heartbeat if in_grading and job is not None else None
        since = _since(run, heartbeat)
        total, graded, requeues = parts.get(run.pk, (0, 0, 0))
        rows.append(RunInState(
            run=run, since=since, age=max(now - since, timedelta(0)),
            waiting_for=WAITING_FOR[RunStatus(run.status)], heartbeat=heartbeat,
            silent=in_grading and (heartbeat is None or heartbeat < stale), requeues=requeues,
            chunks=f"{graded}/{total} chunks graded" if in_grading and total > 1 else ""))
    return sorted(rows, key=lambda row: (row.since, row.run.pk))


def _parts_of_rounds(runs: QuerySet[Run]) -> dict[int, tuple[int, int, int]]:
    """By run: its round's parts, those graded, and the reaper's re-queues of them."""
    rows = (GradingPart.objects.filter(job__run__in=runs).values("job__run_id")
            .annotate(total=Count("pk"), requeues=Sum("requeues"),
                      graded=Count("pk", filter=Q(status=PartStatus.GRADED))))
    return {row["job__run_id"]: (row["total"], row["graded"], row["requeues"])
            for row in rows}


def _since(run: Run, heartbeat: datetime | None) -> datetime:
    if heartbeat is not None:
        return heartbeat
    if run.status == RunStatus.GRADED and run.graded_at is not None:
        return run.graded_at
    return run.created_at


@dataclass(frozen=True)
class WorkerPulse:
    """A worker's last heartbeat and what it says."""

    worker: WorkerHeartbeat
    age: timedelta
    state: str  # "alive", "silent" (missed three beats: dead or frozen), "stopped"

    @property
    def age_text(self) -> str:
        return age_text(self.age)


def worker_pulses(*, now: datetime | None = None) -> list[WorkerPulse]:
    """Every worker seen in the last week (the reaper forgets older ones), by hostname."""
    now = now or timezone.now()
    silent_after = timedelta(seconds=3 * settings.WORKER_HEARTBEAT_SECONDS)
    pulses = []
    for worker in WorkerHeartbeat.objects.all():
        age = max(now - worker.last_beat, timedelta(0))
        state = ("stopped" if worker.stopped_at is not None
                 else "silent" if age > silent_after else "alive")
        pulses.append(WorkerPulse(worker=worker, age=age, state=state))
    return pulses
