"""Claims on grading work: the token and heartbeat a task holds while it grades a run or a
chunk, re-asserted by every write (docs/operations.md, "Claims"). Apart from grading.work.runs
so that every grading service can take one without importing the others."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from django.conf import settings
from django.db import transaction

from grading.judge import JudgeUnavailable
from grading.work.beating import Heartbeat

#: Seconds between a claim's heartbeats, at most: a quarter of GRADING_STALE_SECONDS when
#: that is shorter (`beat_every`), so that a live grader never looks silent to the reaper.
HEARTBEAT_EVERY = 30.0


def beat_every() -> float:
    """How often a claim's heartbeat is written: four beats at least within the stale time."""
    return min(HEARTBEAT_EVERY, settings.GRADING_STALE_SECONDS / 4)


class ClaimLost(Exception):
    """The claim a task grades under is no longer its own: another task took the run (or
    chunk) over, or the run was queued again and claimed by a new task. The task stops
    and writes nothing more; its judgments are cached, where the new owner finds them."""


@dataclass(frozen=True)
class Claim:
    """A task's claim on grading work: `touch` is one conditional UPDATE that writes the beat and
    says whether the claim holds, `hold` a write's transaction that starts with it, and `lost` is
    set once a beat finds the claim gone."""

    token: str
    lost: threading.Event = field(default_factory=threading.Event, compare=False)

    def touch(self) -> bool:
        raise NotImplementedError

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
    """Do grading `work` under a claim and record how it ended, for runs and chunks alike:
    lost, the judge failed (`fail`, unless transient and `may_retry`), or an unexpected error
    (recorded, naming only its type, and raised)."""
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
