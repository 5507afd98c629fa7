"""The one path that grades a claimed run of any graded kind and records how it ended;
the Celery task and the `grade` command both take it (docs/operations.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from grading.judge import Judge, JudgeUnavailable
from grading.judgment_cache import (
    GradingProgress,
    Unwatched,
)
from grading.r2c2.pipeline import (
    GOLD_ANSWERS_MISSING,
    GoldAnswersMissing,
    GradeReport,
    questions_without_gold,
    run_grade,
    second_pass,
)
from grading.rubric.grades import RubricGradeReport, rubric_run_grade
from grading.setup import official_judge, second_judge
from grading.work.chunks import run_grading_split
from grading.work.claims import claimed_work
from grading.work.runs import RunClaim, round_end_scoring, run_grading_finish, run_grading_heartbeat
from submissions.models import Run

#: What one judge's pass over a run did: an AC run's, or a ranking or response run's.
RunGradeReport = GradeReport | RubricGradeReport
#: Makes the progress watcher of one judge's pass over a run, given its description.
GradingWatch = Callable[[str], AbstractContextManager[GradingProgress]]


def _unwatched(desc: str) -> AbstractContextManager[GradingProgress]:
    return contextlib.nullcontext(Unwatched())


@dataclass(frozen=True)
class GradingOutcome:
    """How grading a claimed run ended (what `run_grading` recorded on it)."""

    run: Run
    report: RunGradeReport | None = None  # the official judge's pass; None unless graded
    failure: JudgeUnavailable | None = None  # why the judge failed; its text is on the run
    retry: bool = False  # a transient failure left for the caller to retry: still claimed
    scoring_task: str | None = None  # the last run of a round was graded: scoring queued
    lost: bool = False  # the claim was taken over: nothing more was written, nor recorded
    chunk_tasks: tuple[str, ...] = ()  # split into chunks (grading.work.chunks): their tasks


def run_grading(
    *, run: Run, token: str, judge: Judge | None = None, may_retry: bool = False,
    queue_scoring: bool = True, watch: GradingWatch = _unwatched,
    split_above: int | None = None, chunk_queue: str | None = None,
) -> GradingOutcome:
    """Grade a run claimed with `token` (`run_claim_for_grading`) with the official judge, then an
    AC track's second judge, and record how it ended; an AC run above `split_above` is split into
    chunks instead. The outcomes: docs/operations.md, "How grading a run ends"."""
    def fail(reason: str) -> None:
        run_grading_finish(run=run, token=token, failure=reason)

    def work() -> RunGradeReport | tuple[str, ...]:
        without_gold = [] if run.track.is_rubric else questions_without_gold(run)
        if without_gold:
            raise GoldAnswersMissing(GOLD_ANSWERS_MISSING.format(
                track=run.track.slug, check=run.track.answer_check,
                qids=", ".join(without_gold)))
        if split_above is not None and not run.track.is_rubric:
            tasks = run_grading_split(run=run, token=token, size=split_above, queue=chunk_queue)
            if tasks:
                return tuple(tasks)
        with run_grading_heartbeat(run=run, token=token) as claim:
            with watch(run.name) as progress:
                report = _grade_pass(run=run, judge=judge or official_judge(run.track.campaign),
                                     progress=progress, claim=claim)
            # Rubric grades have no second slot, and need none: a grade belongs to a
            # passage and an item (PassageItemGrade, one per pair), shared by every run
            # and track, and no judge agreement is defined for them
            # (judge_agreement and the disagreement filter are R2C2's). A second judge's
            # rubric pass would cost judge calls whose labels nothing reads.
            second = None if run.track.is_rubric else second_judge(run.track)
            if second is not None:
                with watch(f"{run.name} (second judge)") as progress:
                    second_pass(run=run, judge=second, claim=claim, progress=progress)
        return report

    ended = claimed_work(work, fail=fail, may_retry=may_retry)
    if isinstance(ended.report, tuple):
        return GradingOutcome(run=run, chunk_tasks=ended.report)
    if ended.report is None:
        return GradingOutcome(run=run, failure=ended.failure, retry=ended.retry,
                              lost=ended.lost)
    report = ended.report
    run_grading_finish(run=run, token=token)
    scoring_task = round_end_scoring(run=run) if queue_scoring else None
    return GradingOutcome(run=run, report=report, scoring_task=scoring_task)


def _grade_pass(*, run: Run, judge: Judge, progress: GradingProgress,
                claim: RunClaim) -> RunGradeReport:
    """One official pass over `run`, by its track's kind."""
    if run.track.is_rubric:
        return rubric_run_grade(run=run, judge=judge, progress=progress, claim=claim)
    return run_grade(run=run, judge=judge, progress=progress, claim=claim)
