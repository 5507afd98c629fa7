"""Fixtures for the scoring tests that use the database: the toy AC run graded by a
judge that answers as tests/data/toy/WASEDA-AC-1.marked says, and scored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from scoring.models import Evaluation
from scoring.services import campaign_score
from submissions.models import Run, RunStatus
from tests.grading.rounds import round_graded


@pytest.fixture
def graded_toy_run(toy_ac_run: Run, judge: OpenAIJudge) -> Run:
    """WASEDA-AC-1 graded (status GRADED) and not scored yet: no snapshot exists."""
    run_grade(run=toy_ac_run, judge=judge)
    round_graded(toy_ac_run)
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.status == RunStatus.GRADED
    return toy_ac_run


@pytest.fixture
def scored(graded_toy_run: Run) -> list[Evaluation]:
    """One snapshot per track (ac, then pr), unpublished."""
    return campaign_score(campaign=graded_toy_run.track.campaign)


@pytest.fixture
def celery_eager() -> Iterator[None]:
    """Tasks run in this process as they are sent, errors raised: a task queued with
    `transaction.on_commit` runs when the test runs the captured callbacks."""
    from config.celery import app

    eager = {"task_always_eager": True, "task_eager_propagates": True}
    before = {name: app.conf.get(name) for name in eager}
    app.conf.update(eager)
    yield
    app.conf.update(before)
