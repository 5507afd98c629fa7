"""What a change to a RUBRIC campaign's test bank sets going (docs/rubric.md).

Grading always uses the current bank, and editing an item's text makes its earlier
grades stale. Once runs are graded, an item that is added or edited is graded at once on the
passages already graded for its query, and only that item: the other items' pairs keep
their grades (`rubric_items_grade`). Then the campaign is scored again, so the
leaderboards follow the bank. A retired item needs no judge: its grades stop counting,
so scoring again is all it needs.

Before any run is graded nothing is queued: grading a run grades every current item.
The views call `testbank_changed` after the campaign app's audited write
(campaign/testbank.py), which knows nothing of grading.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from campaign.models import RUBRIC_TRACK_KINDS, Campaign, TestBankItem
from grading.judge import Judge
from grading.judgment_cache import GradingProgress
from grading.rubric.grades import RubricGradeReport, rubric_items_grade
from grading.work.dispatch import enqueue_scoring, enqueue_testbank_items
from submissions.models import Run, RunQuerySet, RunStatus

#: When the grading of changed items could not be queued: grading the graded runs again
#: grades every current item, the changed ones included (the others' grades are cached).

def _rubric_runs(campaign: Campaign) -> RunQuerySet:
    return Run.objects.filter(track__campaign=campaign,
                              track__kind__in=RUBRIC_TRACK_KINDS).current()


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
    """Grade `items` (ids) on what the graded runs rated for their queries, then queue
    scoring, unless a run is still being graded (its grading ends the round and scores).

    Raises `JudgeUnavailable` where judge calls failed; what succeeded is kept, and
    grading the items again judges only the rest.
    """
    report = rubric_items_grade(campaign=campaign, items=items, judge=judge,
                                progress=progress)
    scoring_task = None
    # As at the end of a run's grading: the last run of a round to be graded scores.
    if (_rubric_runs(campaign).judged().exists()
            and not Run.objects.filter(track__campaign=campaign).current()
            .in_grading().exists()):
        scoring_task = enqueue_scoring(campaign.pk)
    return ItemsRegraded(report=report, scoring_task=scoring_task)
