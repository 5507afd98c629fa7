"""A run's life around grading: queued, claimed by one task with a heartbeat, finished or
failed, and which runs a round of grading takes (docs/operations.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from campaign.models import Campaign
from grading.selectors import GRADED_TRACK_KINDS
from grading.work.claims import Claim, claim_heartbeat
from grading.work.dispatch import enqueue_scoring, send_runs_grading
from submissions.models import Run, RunStatus


def enqueue_grading(run_ids: list[int]) -> list[str]:
    """Mark the runs QUEUED now and send a grading task per run on commit; the task ids.
    A task lost on the way leaves its run QUEUED, where the next "grade pending runs"
    finds it; a queue that does not answer raises `QueueUnavailable` at the commit."""
    runs_mark_queued(run_ids=run_ids)
    return send_runs_grading(run_ids)


def runs_mark_queued(*, run_ids: Sequence[int]) -> int:
    """Mark the current accepted runs among `run_ids` that grading takes QUEUED, a run being graded
    too (its grader's finish then records nothing); how many. Resets the reaper's count and dates
    the queueing in the heartbeat (docs/operations.md, "Asking for grading")."""
    return (Run.objects.filter(pk__in=run_ids, track__kind__in=GRADED_TRACK_KINDS).current()
            .accepted().update(status=RunStatus.QUEUED, grading_requeues=0,
                               grading_heartbeat=timezone.now()))


def run_claim_for_grading(*, run_id: int, token: str) -> bool:
    """Take a run for grading, once: False if another live task holds it or it is not gradable.
    A redelivered task (same token) may take it again, and any task once the holder's heartbeat
    is older than GRADING_STALE_SECONDS (docs/operations.md, "Claims")."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    claimable = (
        Q(status__in=RunStatus.AWAITING_GRADING | RunStatus.JUDGED)
        | Q(status=RunStatus.GRADING, grading_token=token)
        | Q(status=RunStatus.GRADING, grading_heartbeat__lt=stale)
    )
    return bool(
        Run.objects.filter(claimable, pk=run_id, track__kind__in=GRADED_TRACK_KINDS).current()
        .update(status=RunStatus.GRADING, grading_token=token, grading_heartbeat=now,
                failure_reason="")
    )


@dataclass(frozen=True)
class RunClaim(Claim):
    """A task's claim on a whole run (`run_claim_for_grading`)."""

    run_id: int = 0

    def touch(self) -> bool:
        # QUEUED too: a run queued again while graded stays its grader's until another
        # task claims it (`runs_mark_queued`); only the finish needs it GRADING.
        return bool(Run.objects.filter(
            pk=self.run_id, grading_token=self.token, status__in=RunStatus.IN_GRADING,
        ).update(grading_heartbeat=timezone.now()))


@contextlib.contextmanager
def run_grading_heartbeat(*, run: Run, token: str) -> Iterator[RunClaim]:
    """While the block runs, tell other workers every 30 s that `token` still grades
    `run`; the claim it yields says when that stopped being true."""
    claim = RunClaim(token=token, run_id=run.pk)
    with claim_heartbeat(claim, name=f"heartbeat-run-{run.pk}"):
        yield claim


FAILED_WITHOUT_MESSAGE = ("grading failed on an error that gave no message; the "
                          "organisers find the details in the grading log")


def run_grading_finish(
    *, run: Run, token: str | None = None, failure: str | None = None
) -> None:
    """Record how grading a run ended: GRADED, or FAILED with `failure` as its reason, only under
    the claim `token` (a grader taken over or queued again records nothing); no token: any claim."""
    if failure is not None and not failure.strip():
        failure = FAILED_WITHOUT_MESSAGE  # a FAILED run always says why
    held = Run.objects.filter(pk=run.pk, status=RunStatus.GRADING)
    if token is not None:
        held = held.filter(grading_token=token)
    held.update(
        status=RunStatus.GRADED if failure is None else RunStatus.FAILED, grading_token="",
        graded_at=timezone.now(), failure_reason=failure or "",
    )


def round_end_scoring(*, run: Run) -> str | None:
    """Queue scoring if no current run of `run`'s campaign is QUEUED or GRADING anymore
    (`run` was the last of a round of grading); the scoring task's id, or None."""
    campaign_id = run.track.campaign_id
    if Run.objects.filter(track__campaign_id=campaign_id).current().in_grading().exists():
        return None
    return enqueue_scoring(campaign_id)


def campaign_grading_queue(*, campaign: Campaign, include_graded: bool = False) -> list[int]:
    """The runs to grade, withdrawn ones left out: new, queued and failed ones, those whose grader
    went silent, and graded ones when asked (docs/operations.md, "Asking for grading")."""
    statuses = RunStatus.AWAITING_GRADING | (RunStatus.JUDGED if include_graded else frozenset())
    stale = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    return list(
        Run.objects.filter(track__campaign=campaign, track__kind__in=GRADED_TRACK_KINDS)
        .current().not_withdrawn()
        .filter(Q(status__in=statuses) | Q(status=RunStatus.GRADING, grading_heartbeat__lt=stale))
        .order_by("pk").values_list("pk", flat=True)
    )
