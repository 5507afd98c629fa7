"""Grading through a real Celery worker: POST grading/, the worker judges, the run is marked."""

from __future__ import annotations

import signal
import subprocess
from datetime import timedelta
from typing import Any

import pytest
from celery.result import AsyncResult
from django.utils import timezone
from django.utils.html import escape

from grading.models import AnswerEvaluation, GradingJob, Judgment, NuggetEntailment
from grading.selectors import marked_run
from grading.tasks import grade_part
from submissions.models import Run, RunStatus
from tests.grading.fixtures import asked_once, judge_from_marked_example
from tests.grading.rounds import queued_part
from tests.grading.scripted_server import BAD_API_KEY, UNKNOWN_MODEL, ScriptedServer
from tests.support import (
    Personas,
    Upload,
    example,
    share_pr_runs,
    signed_in,
    start_worker,
)

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
        "entailment_calls": 8, "answer_calls": 3, "needs_review": 0}
    run = Run.objects.get(pk=run_id)
    marks = "".join(m.mark for b in marked_run(run=run) for m in b.marked.nuggets)
    assert marks == "RRBNBRRN"
    # The last graded run of the round queues scoring on the same worker.
    evaluations: list[int] = AsyncResult(result["scoring_task"]).get(timeout=120)
    assert len(evaluations) == 2  # the ac and pr tracks
    run.refresh_from_db()
    assert run.status == RunStatus.SCORED and run.graded_at is not None


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(
    personas: Personas, upload: Upload, celery_worker: subprocess.Popen[bytes],
    worker_env: dict[str, str], session_judge: ScriptedServer,
) -> None:
    script = session_judge.judge
    script.__dict__.update(judge_from_marked_example().__dict__)
    upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
    share_pr_runs(personas)
    run_id = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1")).json()["id"]

    # A worker of its own queue is killed while its answer requests wait at the judge:
    # the entailment step is over, the answer step under way and unanswered.
    script.hold_answers = True
    doomed = start_worker(worker_env, queues="doomed", name="doomed")
    try:
        grade_part.apply_async(args=(queued_part(Run.objects.get(pk=run_id)),), queue="doomed")
        assert script.answer_arrived.wait(timeout=120), "the doomed worker never judged"
        doomed.send_signal(signal.SIGKILL)
    finally:
        doomed.wait(timeout=30)
        script.release_answers()  # to a dead client
    run = Run.objects.get(pk=run_id)
    assert run.status == RunStatus.GRADING and not AnswerEvaluation.objects.exists()
    assert Judgment.objects.filter(kind="entailment").count() == 8
    assert not Judgment.objects.filter(kind="answer").exists()

    # Its heartbeat goes stale; organisers queue grading again and a live worker takes over.
    GradingJob.objects.filter(run_id=run_id).update(heartbeat=timezone.now() - timedelta(hours=1))
    response = personas.client("organiser").post("/api/v1/campaigns/toy/grading/")
    assert response.json()["runs"] == ["WASEDA-AC-1"]
    result: dict[str, Any] = AsyncResult(response.json()["tasks"][0]).get(timeout=120)

    assert (result["entailment_calls"], result["answer_calls"]) == (0, 3)
    assert Judgment.objects.count() == 11  # eight nuggets and three answers, each once
    assert NuggetEntailment.objects.count() == 8 and AnswerEvaluation.objects.count() == 3
    assert asked_once(script.calls, script.entailed)  # no nugget judged twice
    marks = "".join(m.mark for b in marked_run(run=run) for m in b.marked.nuggets)
    assert marks == "RRBNBRRN"


@pytest.mark.parametrize("fault", ["401", "404"], ids=["bad API key", "unknown model"])
def test_a_worker_fails_a_run_the_judge_refuses_at_once_and_says_why(
    personas: Personas, upload: Upload, celery_worker: subprocess.Popen[bytes],
    session_judge: ScriptedServer, fault: str,
) -> None:
    script = session_judge.judge
    script.__dict__.update(judge_from_marked_example().__dict__)
    # One refusal per nugget: a retry, by the client or by the task, would be answered
    # and grade the run.
    script.faults.update({nugget: [fault] for nugget in script.entailed})
    upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
    share_pr_runs(personas)
    run_id = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1")).json()["id"]

    response = personas.client("organiser").post("/api/v1/campaigns/toy/grading/")
    task: AsyncResult[Any] = AsyncResult(response.json()["tasks"][0])
    task.get(timeout=120, propagate=False)

    assert task.state == "FAILURE"
    assert len(script.entailed) == 8 and asked_once(script.calls, script.entailed)
    assert sum(script.calls.values()) == 6  # no answer was asked about, nor a ruled nugget
    run = Run.objects.get(pk=run_id)
    assert run.status == RunStatus.FAILED
    message = BAD_API_KEY if fault == "401" else UNKNOWN_MODEL.format(model="scripted-judge")
    assert f"(HTTP {fault}): " in run.failure_reason and message in run.failure_reason
    body = personas.client("participant_a").get(f"/api/v1/runs/{run_id}/").json()
    assert (body["status"], body["failure_reason"]) == ("failed", run.failure_reason)
    page = signed_in(personas, "participant_a").get(f"/runs/{run_id}/").content.decode()
    assert escape(run.failure_reason) in page
