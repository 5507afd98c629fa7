"""Grading (some questions of) a claimed AC run, as the track-kind registry names it: the gold
key checked first, then the official judge's pass, then the track's second judge's."""

from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import AbstractContextManager

from grading.judge import Judge
from grading.judgment_cache import GradingProgress
from grading.r2c2.pipeline import (
    GOLD_ANSWERS_MISSING,
    GoldAnswersMissing,
    GradeReport,
    questions_without_gold,
    run_grade,
    second_pass,
)
from grading.setup import second_judge
from grading.work.claims import Claim
from submissions.models import Run


def grade_ac_part(*, run: Run, judge: Judge, claim: Claim, qids: Collection[str] | None,
                  watch: Callable[[str], AbstractContextManager[GradingProgress]]
                  ) -> GradeReport:
    """Grade `run` (its questions `qids`, or all) under `claim`; `GoldAnswersMissing` before
    any judge call where its track checks answers against a gold key some question lacks."""
    without_gold = questions_without_gold(run)
    if without_gold:
        raise GoldAnswersMissing(GOLD_ANSWERS_MISSING.format(
            track=run.track.slug, check=run.track.answer_check, qids=", ".join(without_gold)))
    with watch(run.name) as progress:
        report = run_grade(run=run, judge=judge, progress=progress, claim=claim, qids=qids)
    second = second_judge(run.track)
    if second is not None:
        with watch(f"{run.name} (second judge)") as progress:
            second_pass(run=run, judge=second, claim=claim, progress=progress, qids=qids)
    return report
