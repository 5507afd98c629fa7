"""The scoring task outlives a lost database connection: it is tried again, not dropped
(the staging test, tests/staging/, drops the workers' connections mid-scoring)."""

from __future__ import annotations

from typing import Any

import pytest
from celery import current_app
from django.db import OperationalError

from grading.work.dispatch import SCORE_CAMPAIGN, enqueue_scoring
from scoring import tasks
from scoring.models import Evaluation
from submissions.models import Run

pytestmark = pytest.mark.django_db


def test_a_connection_lost_mid_scoring_is_retried_until_the_leaderboards_are_made(
    graded_toy_run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    campaign = graded_toy_run.track.campaign
    real = tasks.campaign_score
    calls: list[int] = []

    def drops_once(**kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("terminating connection due to administrator command")
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tasks, "campaign_score", drops_once)

    result = tasks.score_campaign.apply(args=(campaign.pk,))

    assert result.state == "SUCCESS", result.result
    assert len(calls) == 2
    made = result.result
    assert isinstance(made, list) and made
    assert sorted(made) == sorted(Evaluation.objects.values_list("pk", flat=True))


def test_grading_hands_a_campaign_to_scoring_by_the_task_name_scoring_registers(
    graded_toy_run: Run, celery_eager: None, django_capture_on_commit_callbacks: Any
) -> None:
    assert current_app.tasks[SCORE_CAMPAIGN].run is tasks.score_campaign.run
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_scoring(graded_toy_run.track.campaign_id)

    assert Evaluation.objects.filter(track__campaign=graded_toy_run.track.campaign).exists()
