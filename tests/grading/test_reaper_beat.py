"""The reaper as it runs in production: a real `celery beat` sends it to a real worker,
while grading workers die mid-run. No one asks for grading again: the reaper re-queues
the run and a live worker grades it; when every worker it gets dies, the run ends FAILED
with the reason after GRADING_MAX_REQUEUES re-queues.

The processes use queues named after this test process (the *_QUEUE_NAME settings), so
the session's own worker (tests/conftest.py) never takes their tasks, and a short
GRADING_STALE_SECONDS, so silence is noticed in seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from django.utils.html import escape

from grading.models import (
    AnswerEvaluation,
    GradingPart,
    Judgment,
    NuggetEntailment,
    WorkerHeartbeat,
)
from grading.selectors import marked_run
from grading.tasks import grade_part
from grading.work.rounds import rounds_start
from submissions.models import Run, RunStatus
from tests.grading.fixtures import asked_once, judge_from_marked_example
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import REPO, Personas, Upload, signed_in, start_worker, upload_toy_ac_run

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

#: How long a test waits for the processes before it fails (never reached when it works).
PATIENCE = 180.0
TOY_MARKS = "RRBNBRRN"
MAX_REQUEUES = 2

PID = os.getpid()
DEFAULT_QUEUE, GRADING_QUEUE, SCORING_QUEUE = (f"reaper-{name}-{PID}"
                                               for name in ("celery", "grading", "scoring"))


def processes_env(worker_env: dict[str, str], judge: ScriptedServer[Any], *,
                  stale: int) -> dict[str, str]:
    return {**worker_env, "GRADER_BASE_URL": judge.base_url,
            "CELERY_DEFAULT_QUEUE_NAME": DEFAULT_QUEUE, "GRADING_QUEUE_NAME": GRADING_QUEUE,
            "SCORING_QUEUE_NAME": SCORING_QUEUE, "GRADING_STALE_SECONDS": str(stale),
            "GRADING_REAP_EVERY": "1", "WORKER_HEARTBEAT_SECONDS": "1",
            "GRADING_MAX_REQUEUES": str(MAX_REQUEUES)}


def start_beat(env: dict[str, str], folder: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel=WARNING",
         "--schedule", str(folder / "beat-schedule")], cwd=REPO, env=env)


def held_judge() -> ScriptedJudge:
    """The toy run's judge, holding every answer request until released."""
    judge = judge_from_marked_example()
    judge.hold_answers = True
    return judge


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll the database (where the other processes say what they did) until `condition`."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"waited {PATIENCE:.0f} s for {what}"
        time.sleep(0.2)


def run_of(run_id: int) -> Run:
    return Run.objects.get(pk=run_id)


def part_of(run_id: int) -> GradingPart:
    """The one part of the run's round."""
    return GradingPart.objects.get(job__run_id=run_id)


def send_grading(run_id: int) -> None:
    """What the organisers' "grade" does, to this test's grading queue."""
    for part in rounds_start(run_ids=[run_id]):
        grade_part.apply_async(args=(part,), queue=GRADING_QUEUE)


def test_beat_re_queues_a_run_whose_worker_died_and_a_live_worker_grades_it_unasked(
    personas: Personas, upload: Upload, worker_env: dict[str, str], tmp_path: Path,
    stop_later: list[subprocess.Popen[Any]],
) -> None:
    run_id = upload_toy_ac_run(personas, upload)
    judge = held_judge()
    with ScriptedServer(judge) as server:
        # Silence is 10 s here: the live worker's grading must never look silent.
        env = processes_env(worker_env, server, stale=10)
        doomed = start_worker(env, queues=GRADING_QUEUE, name="doomed")
        stop_later.append(doomed)
        wait_until(lambda: WorkerHeartbeat.objects.filter(hostname__startswith="doomed-")
                   .exists(), "the doomed worker's first heartbeat")
        send_grading(run_id)
        # Killed mid-run: its entailments are stored, its answer requests wait at the judge.
        assert judge.answer_arrived.wait(timeout=PATIENCE), "the doomed worker never judged"
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=30)
        died_at = timezone.now()
        judge.release_answers()
        assert run_of(run_id).status == RunStatus.GRADING  # and nothing will redeliver its task

        # From here on no one asks for grading: beat, the reaper and a live worker.
        stop_later.append(start_worker(
            env, queues=f"{DEFAULT_QUEUE},{GRADING_QUEUE},{SCORING_QUEUE}", name="live"))
        stop_later.append(start_beat(env, tmp_path))
        wait_until(lambda: run_of(run_id).status == RunStatus.SCORED, "the run to be scored")

    run = run_of(run_id)
    assert (part_of(run_id).requeues, run.failure_reason) == (1, "")
    marks = "".join(m.mark for b in marked_run(run=run) for m in b.marked.nuggets)
    assert marks == TOY_MARKS
    # The dead worker's entailments were kept: none judged twice, nothing duplicated.
    assert asked_once(judge.calls, judge.entailed)
    assert Judgment.objects.count() == 11
    assert NuggetEntailment.objects.count() == 8 and AnswerEvaluation.objects.count() == 3
    # Each worker's heartbeat is recorded; the dead one's stopped when it died.
    beats = {row.hostname.split("-")[0]: row for row in WorkerHeartbeat.objects.all()}
    assert {"doomed", "live"} <= set(beats)
    assert beats["doomed"].last_beat < died_at and beats["doomed"].stopped_at is None
    assert GRADING_QUEUE in beats["live"].queue_names


def test_beat_fails_a_run_whose_workers_keep_dying_and_says_why(
    personas: Personas, upload: Upload, worker_env: dict[str, str], tmp_path: Path,
    stop_later: list[subprocess.Popen[Any]],
) -> None:
    run_id = upload_toy_ac_run(personas, upload)
    judge = held_judge()  # never released: every grading worker dies waiting for it
    with ScriptedServer(judge) as server:
        env = processes_env(worker_env, server, stale=4)
        # The reaper's worker (the default queue only) and beat live throughout.
        stop_later.append(start_worker(env, queues=DEFAULT_QUEUE, name="reaper"))
        stop_later.append(start_beat(env, tmp_path))
        send_grading(run_id)

        killed: list[str] = []

        def claimed_anew_or_failed() -> bool:
            run = run_of(run_id)
            if run.status == RunStatus.FAILED:
                return True
            return (run.status == RunStatus.GRADING and part_of(run_id).token not in killed
                    and judge.answer_arrived.is_set())

        while run_of(run_id).status != RunStatus.FAILED:
            assert len(killed) <= MAX_REQUEUES, "the run outlived its re-queues"
            worker = start_worker(env, queues=f"{GRADING_QUEUE},{SCORING_QUEUE}",
                                  name=f"doomed{len(killed)}")
            stop_later.append(worker)
            wait_until(claimed_anew_or_failed, "a new worker to claim the run")
            token = part_of(run_id).token
            judge.answer_arrived.clear()
            worker.send_signal(signal.SIGKILL)  # its heartbeat stops with it
            worker.wait(timeout=30)
            if token:
                killed.append(token)
            wait_until(lambda: run_of(run_id).status in (RunStatus.QUEUED, RunStatus.FAILED),
                       "the reaper to re-queue or fail the run")

    run = run_of(run_id)
    assert run.status == RunStatus.FAILED and part_of(run_id).requeues == MAX_REQUEUES
    assert run.failure_reason.startswith(
        f"its worker went silent {MAX_REQUEUES + 1} times: grading was re-queued "
        f"{MAX_REQUEUES} time(s) (GRADING_MAX_REQUEUES)")
    assert "last heartbeat at " in run.failure_reason
    assert 1 <= len(set(killed)) <= MAX_REQUEUES + 1  # each death a claim of its own
    # The team sees why, on the page and through the API.
    body = personas.client("participant_a").get(f"/api/v1/runs/{run_id}/").json()
    assert (body["status"], body["failure_reason"]) == ("failed", run.failure_reason)
    page = signed_in(personas, "participant_a").get(f"/runs/{run_id}/").content.decode()
    assert escape(run.failure_reason) in page
