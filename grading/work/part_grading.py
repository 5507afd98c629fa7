"""The one path that grades a claimed part of a round, of any graded kind, and records how it
ended; the Celery task and the `grade` command both take it (docs/operations.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from campaign.kinds import behaviour, kind_of
from grading.judge import Judge, JudgeUnavailable
from grading.judgment_cache import GradingProgress, Unwatched
from grading.models import GradingPart
from grading.r2c2.pipeline import GradeReport
from grading.rubric.grades import RubricGradeReport
from grading.setup import official_judge
from grading.work.claims import claim_heartbeat, claim_of, claimed_work
from grading.work.rounds import part_fail, part_graded, round_end_scoring
from submissions.models import Run

#: What one judge's pass over a run did: an AC run's, or a ranking or response run's.
RunGradeReport = GradeReport | RubricGradeReport
#: Makes the progress watcher of one judge's pass over a run, given its description.
GradingWatch = Callable[[str], AbstractContextManager[GradingProgress]]


def _unwatched(desc: str) -> AbstractContextManager[GradingProgress]:
    return contextlib.nullcontext(Unwatched())


@dataclass(frozen=True)
class GradingOutcome:
    """How grading a claimed part ended (what `part_grading` recorded)."""

    part: GradingPart
    report: RunGradeReport | None = None  # the official judge's pass; None unless graded
    failure: JudgeUnavailable | None = None  # why the judge failed; its text is on the run
    retry: bool = False  # a transient failure left for the caller to retry: still claimed
    lost: bool = False  # the claim was taken over: nothing more was written, nor recorded
    run_graded: bool = False  # this was the round's last part: the run is GRADED
    scoring_task: str | None = None  # ... and the last run of its campaign's round

    @property
    def run(self) -> Run:
        return self.part.job.run


def part_grading(
    *, part: GradingPart, token: str, judge: Judge | None = None, may_retry: bool = False,
    queue_scoring: bool = True, watch: GradingWatch = _unwatched, worker: str = "",
) -> GradingOutcome:
    """Grade a part claimed with `token` as its run's kind does (the kind registry's grader), and
    record how it ended; the round's last part marks the run GRADED and may queue scoring.
    The outcomes: docs/operations.md, "How grading a run ends"."""
    run = part.job.run
    claim = claim_of(part, token=token)

    def fail(reason: str) -> None:
        part_fail(part=part, token=token, reason=reason)

    def work() -> tuple[RunGradeReport, bool]:
        grade = behaviour(kind_of(run.track.kind).grader)
        with claim_heartbeat(claim, name=f"heartbeat-part-{part.pk}"):
            report = grade(run=run, judge=judge or official_judge(run.track.campaign),
                           claim=claim, qids=part.qids, watch=watch)
            with claim.hold():
                graded = part_graded(part=part, calls=report.judge_calls,
                                     needs_review=report.needs_review, worker=worker)
        return report, graded

    ended = claimed_work(work, fail=fail, may_retry=may_retry)
    if ended.report is None:
        return GradingOutcome(part=part, failure=ended.failure, retry=ended.retry,
                              lost=ended.lost)
    report, run_graded = ended.report
    scoring_task = round_end_scoring(run=run) if run_graded and queue_scoring else None
    return GradingOutcome(part=part, report=report, run_graded=run_graded,
                          scoring_task=scoring_task)
