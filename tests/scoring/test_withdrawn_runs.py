"""A withdrawn run is left out of the leaderboards and of the PR qrels
its nuggets would derive, and is back in both once restored."""

from __future__ import annotations

import pytest

from grading.work.rounds import campaign_grading_queue
from scoring.models import RunScore
from scoring.selectors import campaign_qrels
from scoring.services import campaign_score
from submissions.models import Run, RunActionKind
from submissions.overrides import run_action_record
from tests.support import Personas

pytestmark = pytest.mark.django_db


def scored_runs(run: Run) -> dict[str, set[str]]:
    """Track slug -> names of the runs in its newest snapshot, after scoring now."""
    evaluations = campaign_score(campaign=run.track.campaign)
    return {e.track.slug: set(RunScore.objects.filter(evaluation=e)
                              .values_list("run__name", flat=True)) for e in evaluations}


def test_scoring_skips_a_withdrawn_run_and_takes_it_back_once_restored(
    graded_toy_run: Run, personas: Personas
) -> None:
    campaign = graded_toy_run.track.campaign
    before = scored_runs(graded_toy_run)
    qrels_before = campaign_qrels(campaign=campaign)
    assert "WASEDA-AC-1" in before["ac"] and qrels_before  # the toy run has relevant nuggets

    run_action_record(run=graded_toy_run, action=RunActionKind.WITHDRAW,
                      user=personas.organiser, reason="Broke the rules.")
    withdrawn = scored_runs(graded_toy_run)

    assert withdrawn["ac"] == set()
    assert campaign_qrels(campaign=campaign) == {}
    assert withdrawn["pr"] == before["pr"]  # PR runs stay, scored on the qrels left

    run_action_record(run=graded_toy_run, action=RunActionKind.RESTORE,
                      user=personas.organiser, reason="Cleared on appeal.")
    assert scored_runs(graded_toy_run) == before
    assert campaign_qrels(campaign=campaign) == qrels_before


def test_a_withdrawn_pr_run_leaves_the_pr_leaderboard(
    graded_toy_run: Run, personas: Personas
) -> None:
    pr_run = Run.objects.get(name="KYOTO-PG-1")
    run_action_record(run=pr_run, action=RunActionKind.WITHDRAW, user=personas.organiser,
                      reason="Duplicate of KYOTO-PO-1.")
    assert scored_runs(graded_toy_run)["pr"] == {"WASEDA-PO-1"}


def test_grading_the_pending_runs_passes_over_a_withdrawn_run(
    graded_toy_run: Run, personas: Personas
) -> None:
    campaign = graded_toy_run.track.campaign
    assert campaign_grading_queue(campaign=campaign, include_graded=True) == [graded_toy_run.pk]

    run_action_record(run=graded_toy_run, action=RunActionKind.WITHDRAW,
                      user=personas.organiser, reason="Broke the rules.")

    assert campaign_grading_queue(campaign=campaign, include_graded=True) == []
