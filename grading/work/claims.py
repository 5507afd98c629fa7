"""Claims on grading work: the token and heartbeat a task holds on a part of a round while it
grades it, re-asserted by every write (docs/operations.md, "Claims")."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from grading.judge import JudgeUnavailable
from grading.models import GradingJob, GradingPart, PartStatus
from grading.work.beating import Heartbeat
from submissions.models import Run, RunStatus

#: Seconds between a claim's heartbeats, at most: a quarter of GRADING_STALE_SECONDS when
#: that is shorter (`beat_every`), so that a live grader never looks silent to the reaper.
HEARTBEAT_EVERY = 30.0


def beat_every() -> float:
    """How often a claim's heartbeat is written: four beats at least within the stale time."""
    return min(HEARTBEAT_EVERY, settings.GRADING_STALE_SECONDS / 4)


def stale_before(now: datetime) -> datetime:
    """The moment before which a heartbeat is silence (GRADING_STALE_SECONDS)."""
    return now - timedelta(seconds=settings.GRADING_STALE_SECONDS)


class ClaimLost(Exception):
    """The claim a task grades under is no longer its own: another task took the part over, or
    the run was queued again (a new round) or failed. The task stops and writes nothing more;
    its judgments are cached, where the new owner finds them."""


@dataclass(frozen=True)
class Claim:
    """A task's claim on a part of a round: `touch` writes the beat and says whether the claim
    holds, `hold` is a write's transaction that starts with it, and `lost` is set once a beat
    finds the claim gone."""

    token: str
    part_id: int
    job_id: int
    round: str
    lost: threading.Event = field(default_factory=threading.Event, compare=False)

    def touch(self) -> bool:
        now = timezone.now()
        with transaction.atomic():
            # The round's row first, as every write under a claim: one lock order.
            if not GradingJob.objects.filter(pk=self.job_id, round=self.round).update(
                    heartbeat=now):
                return False
            if GradingPart.objects.filter(pk=self.part_id, token=self.token,
                                          status=PartStatus.GRADING).update(heartbeat=now):
                return True
            transaction.set_rollback(True)
            return False

    def check(self) -> None:
        """`ClaimLost` if a beat found the claim gone (cheap: no query)."""
        if self.lost.is_set():
            raise ClaimLost(self.token)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """A transaction in which the claim holds: `ClaimLost` (nothing written) if not."""
        with transaction.atomic():
            if not self.touch():
                self.lost.set()
                raise ClaimLost(self.token)
            yield


def part_claim(*, part_id: int, token: str) -> GradingPart | None:
    """Take a part for grading, once: the part (its job and run loaded), or None if another live
    task holds it, it is graded, or its round is over. A redelivered task (same token) takes it
    again, and any task once the holder's beat is GRADING_STALE_SECONDS old."""
    now = timezone.now()
    claimable = (Q(status=PartStatus.QUEUED) | Q(status=PartStatus.GRADING, token=token)
                 | Q(status=PartStatus.GRADING, heartbeat__lt=stale_before(now)))
    with transaction.atomic():
        job = (GradingJob.objects.select_for_update(of=("self",))
               .filter(parts__pk=part_id).exclude(round="").first())
        if job is None:
            return None
        if not GradingPart.objects.filter(claimable, pk=part_id).update(
                status=PartStatus.GRADING, token=token, heartbeat=now):
            return None
        if not Run.objects.filter(pk=job.run_id, status__in=RunStatus.IN_GRADING).current() \
                .update(status=RunStatus.GRADING, failure_reason=""):
            transaction.set_rollback(True)  # replaced by a newer version meanwhile
            return None
        GradingJob.objects.filter(pk=job.pk).update(heartbeat=now)
    return GradingPart.objects.select_related("job__run__track__campaign").get(pk=part_id)


def claim_of(part: GradingPart, *, token: str) -> Claim:
    """The claim `token` holds on `part` (taken by `part_claim`)."""
    return Claim(token=token, part_id=part.pk, job_id=part.job_id, round=part.job.round)


@contextlib.contextmanager
def claim_heartbeat(claim: Claim, *, name: str) -> Iterator[None]:
    """While the block runs, touch `claim` every `beat_every()` seconds from a thread named `name`,
    setting `lost` once it is gone: one batch to a slow judge can outlast the stale time."""

    def touch() -> None:
        if not claim.touch():
            claim.lost.set()

    heartbeat = Heartbeat(touch, every=beat_every(), name=name)
    heartbeat.start()
    try:
        yield
    finally:
        heartbeat.stop()


UNEXPECTED_FAILURE = ("grading stopped on an unexpected error ({error}); the organisers "
                      "find the details in the grading log")

Report = TypeVar("Report")


@dataclass(frozen=True)
class Ended(Generic[Report]):
    """How claimed grading work ended: its report, or why not (`claimed_work`)."""

    report: Report | None = None  # None unless the work was done
    failure: JudgeUnavailable | None = None  # why the judge failed; recorded by `fail`
    retry: bool = False  # a transient failure left for the caller's retry: still claimed
    lost: bool = False  # the claim was taken over: nothing more written, nor recorded


def claimed_work(work: Callable[[], Report], *, fail: Callable[[str], None],
                 may_retry: bool) -> Ended[Report]:
    """Do grading `work` under a claim and record how it ended: lost, the judge failed (`fail`,
    unless transient and `may_retry`), or an unexpected error (recorded, naming only its type,
    and raised)."""
    try:
        return Ended(report=work())
    except ClaimLost:
        return Ended(lost=True)
    except JudgeUnavailable as unavailable:
        if may_retry and not unavailable.permanent:
            return Ended(failure=unavailable, retry=True)
        fail(str(unavailable))
        return Ended(failure=unavailable)
    except Exception as error:
        fail(UNEXPECTED_FAILURE.format(error=type(error).__name__))
        raise
