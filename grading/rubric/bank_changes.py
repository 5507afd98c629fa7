"""What a change to a RUBRIC campaign's test bank sets going: the changed items graded on what
the graded runs rated, then scoring (docs/rubric.md, "The test bank")."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from campaign.kinds import kinds
from campaign.models import Campaign, TestBankItem
from grading.judge import Judge
from grading.judgment_cache import GradingProgress
from grading.rubric.grades import RubricGradeReport, rubric_items_grade
from grading.work.dispatch import enqueue_scoring, enqueue_testbank_items
from submissions.models import Run, RunQuerySet, RunStatus


def _rubric_runs(campaign: Campaign) -> RunQuerySet:
    return Run.objects.filter(track__campaign=campaign,
                              track__kind__in=kinds(rubric=True)).current()


def testbank_changed(*, campaign: Campaign, items: Sequence[TestBankItem]) -> str | None:
    """Queue the grading of `items` (just added, edited or retired) once the current
    transaction commits, if any of the campaign's runs is graded or being graded; the
    task id, else None."""
    if not items or not _rubric_runs(campaign).filter(
            status__in=RunStatus.JUDGED | RunStatus.IN_GRADING).exists():
        return None
    return enqueue_testbank_items(campaign.pk, sorted(item.pk for item in items))


@dataclass(frozen=True)
class ItemsRegraded:
    """What `testbank_items_regrade` did."""

    report: RubricGradeReport
    scoring_task: str | None  # None while runs are still being graded: the last scores


def testbank_items_regrade(
    *, campaign: Campaign, items: Collection[int], judge: Judge,
    progress: GradingProgress | None = None,
) -> ItemsRegraded:
    """Grade `items` (ids) on what the graded runs rated for their queries, then queue scoring,
    unless a run is still being graded; `JudgeUnavailable` where calls failed (the rest kept)."""
    report = rubric_items_grade(campaign=campaign, items=items, judge=judge,
                                progress=progress)
    scoring_task = None
    # As at the end of a run's grading: the last run of a round to be graded scores.
    if (_rubric_runs(campaign).judged().exists()
            and not Run.objects.filter(track__campaign=campaign).current()
            .in_grading().exists()):
        scoring_task = enqueue_scoring(campaign.pk)
    return ItemsRegraded(report=report, scoring_task=scoring_task)
