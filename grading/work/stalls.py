"""Reads for the organisers' stall list: runs not done yet, oldest in their state first, and the
workers' pulse (docs/operations.md, "The stall list")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from campaign.models import Campaign
from grading.models import ChunkStatus, GradingChunk, WorkerHeartbeat
from grading.selectors import GRADED_TRACK_KINDS
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
    since: datetime  # when it entered its state; a GRADING run: its last heartbeat
    age: timedelta
    waiting_for: str
    silent: bool  # QUEUED or GRADING with no sign of life for GRADING_STALE_SECONDS
    chunks: str = ""  # a run graded in chunks: "2/5 chunks graded"

    @property
    def age_text(self) -> str:
        return age_text(self.age)


def runs_not_done(*, campaign: Campaign, now: datetime | None = None) -> list[RunInState]:
    """The campaign's current runs not at an end (INVALID, SCORED, FAILED, a PR run's VALID),
    oldest in their state first; a GRADING run is dated by its last heartbeat."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    waiting = (Q(status__in=[RunStatus.RECEIVED, RunStatus.QUEUED, RunStatus.GRADING,
                             RunStatus.GRADED])
               | Q(status=RunStatus.VALID, track__kind__in=GRADED_TRACK_KINDS))
    runs = (Run.objects.filter(waiting, track__campaign=campaign).current()
            .select_related("team", "track"))
    chunk_counts = _chunk_counts(runs)
    rows = []
    for run in runs:
        since = _since(run)
        silent = (run.status in RunStatus.IN_GRADING
                  and (run.grading_heartbeat is None or run.grading_heartbeat < stale))
        rows.append(RunInState(run=run, since=since, age=max(now - since, timedelta(0)),
                               waiting_for=WAITING_FOR[RunStatus(run.status)], silent=silent,
                               chunks=chunk_counts.get((run.pk, run.grading_token), "")))
    return sorted(rows, key=lambda row: (row.since, row.run.pk))


def _since(run: Run) -> datetime:
    if run.status in RunStatus.IN_GRADING and run.grading_heartbeat is not None:
        return run.grading_heartbeat
    if run.status == RunStatus.GRADED and run.graded_at is not None:
        return run.graded_at
    return run.created_at


def _chunk_counts(runs: QuerySet[Run]) -> dict[tuple[int, str], str]:
    counts = (GradingChunk.objects.filter(run__in=runs).values("run_id", "round")
              .annotate(total=Count("pk"), graded=Count("pk", filter=Q(
                  status=ChunkStatus.GRADED))))
    return {(row["run_id"], row["round"]): f"{row['graded']}/{row['total']} chunks graded"
            for row in counts}


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
