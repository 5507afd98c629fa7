"""Grading through a real Celery worker: POST grading/, the worker judges, the run is marked."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from celery.result import AsyncResult

from grading.selectors import marked_run
from submissions.models import Run, RunStatus
from tests.grading.fixtures import judge_from_marked_example
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas, Upload, example, share_pr_runs

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_grades_the_queued_runs(
    personas: Personas, upload: Upload, celery_worker: subprocess.Popen[bytes],
    session_judge: ScriptedServer,
) -> None:
    session_judge.judge.__dict__.update(judge_from_marked_example().__dict__)
    upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
    share_pr_runs(personas)
    run_id = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1")).json()["id"]

    response = personas.client("organiser").post("/api/v1/campaigns/toy/grading/")
    [task_id] = response.json()["tasks"]
    result: dict[str, Any] = AsyncResult(task_id).get(timeout=120)

    assert {k: result[k] for k in ("entailment_calls", "answer_calls", "needs_review")} == {
        "entailment_calls": 6, "answer_calls": 3, "needs_review": 0}
    run = Run.objects.get(pk=run_id)
    marks = "".join(m.mark for b in marked_run(run=run) for m in b.marked.nuggets)
    assert marks == "RRBNRR"
    # The last graded run of the round queues scoring on the same worker.
    evaluations: list[int] = AsyncResult(result["scoring_task"]).get(timeout=120)
    assert len(evaluations) == 2  # the ac and pr tracks
    run.refresh_from_db()
    assert run.status == RunStatus.SCORED and run.graded_at is not None
