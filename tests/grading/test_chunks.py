"""A large AC run split into chunks of whole questions, each graded on its own claim
(grading.work.chunks), here in one process; tests/grading/test_grading_claims.py has two
Celery workers share one run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from grading.models import AnswerEvaluation, ChunkStatus, GradingChunk, NuggetEntailment
from grading.openai_judge import OpenAIJudge
from grading.selectors import marked_run
from grading.work.chunks import chunk_claim, chunk_grading, chunk_plan
from grading.work.run_grading import run_grading
from grading.work.runs import enqueue_grading, run_claim_for_grading
from submissions.models import Run, RunStatus
from tests.grading.fixtures import make_judge
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]

#: Its marks as one pass over the whole run gives them (tests/data/toy/WASEDA-AC-1.marked).
TOY_MARKS = "RRBNBRRN"


def claimed(run: Run, token: str) -> Run:
    assert run_claim_for_grading(run_id=run.pk, token=token)
    return Run.objects.select_related("track__campaign").get(pk=run.pk)


def split(run: Run, token: str, capture: Capture, size: int = 3) -> list[GradingChunk]:
    with capture(execute=False) as queued:
        outcome = run_grading(run=claimed(run, token), token=token, split_above=size)
    assert len(outcome.chunk_tasks) == len(queued)
    return list(GradingChunk.objects.filter(run=run, round=token).order_by("number"))


def marks(run: Run) -> str:
    return "".join(m.mark for b in marked_run(run=run) for m in b.marked.nuggets)


def status_of(run: Run) -> str:
    return Run.objects.get(pk=run.pk).status


def test_chunks_hold_whole_questions_up_to_the_size(toy_ac_run: Run) -> None:
    # The toy run's questions have 3, 2 and 3 nuggets.
    assert chunk_plan(run=toy_ac_run, size=3) == [["D001"], ["D002"], ["D003"]]
    assert chunk_plan(run=toy_ac_run, size=5) == [["D001", "D002"], ["D003"]]
    assert chunk_plan(run=toy_ac_run, size=2) == [["D001"], ["D002"], ["D003"]]
    assert chunk_plan(run=toy_ac_run, size=8) == [["D001", "D002", "D003"]]


def test_a_run_that_fits_in_one_chunk_is_graded_by_its_own_task(
    toy_ac_run: Run, judge: OpenAIJudge,
) -> None:
    outcome = run_grading(run=claimed(toy_ac_run, "task-1"), token="task-1", judge=judge,
                          split_above=8, queue_scoring=False)
    assert outcome.chunk_tasks == () and outcome.report is not None
    assert not GradingChunk.objects.exists()
    assert (status_of(toy_ac_run), marks(toy_ac_run)) == (RunStatus.GRADED, TOY_MARKS)


def test_chunks_graded_in_any_order_grade_the_run_as_one_pass_does(
    toy_ac_run: Run, judge: OpenAIJudge, script: ScriptedJudge,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, third = split(toy_ac_run, "task-1", django_capture_on_commit_callbacks)
    assert [c.nuggets for c in (first, second, third)] == [3, 2, 3]

    ended = []
    for number, chunk in enumerate((third, first, second)):
        taken = chunk_claim(chunk_id=chunk.pk, token=f"chunk-task-{number}")
        assert taken is not None
        with django_capture_on_commit_callbacks(execute=False) as queued:
            outcome = chunk_grading(chunk=taken, token=f"chunk-task-{number}", judge=judge,
                                    worker=f"worker-{number % 2}")
        ended.append((outcome.run_graded, status_of(toy_ac_run), len(queued)))

    # Only the last chunk ends the run, and the round: scoring is queued then.
    assert ended == [(False, RunStatus.GRADING, 0), (False, RunStatus.GRADING, 0),
                     (True, RunStatus.GRADED, 1)]
    assert marks(toy_ac_run) == TOY_MARKS
    assert NuggetEntailment.objects.count() == 8 and AnswerEvaluation.objects.count() == 3
    # Each question asked once: the 6 nuggets the names-and-numbers rule leaves to the
    # judge, 3 answers, 2 + 3 relevance calls for the entailed nuggets of the two
    # correct answers (D001, D003).
    assert len(script.calls) == 14 and set(script.calls.values()) == {1}
    chunks = GradingChunk.objects.filter(run=toy_ac_run).order_by("number")
    assert [(c.status, c.entailment_calls, c.answer_calls, c.graded_by) for c in chunks] == [
        (ChunkStatus.GRADED, 3, 1, "worker-1"), (ChunkStatus.GRADED, 2, 1, "worker-0"),
        (ChunkStatus.GRADED, 3, 1, "worker-0")]


def test_a_chunk_is_claimed_once_but_its_own_redelivered_task_may_take_it_again(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    chunk, *_ = split(toy_ac_run, "task-1", django_capture_on_commit_callbacks)
    assert chunk_claim(chunk_id=chunk.pk, token="chunk-a") is not None
    assert chunk_claim(chunk_id=chunk.pk, token="chunk-b") is None
    assert chunk_claim(chunk_id=chunk.pk, token="chunk-a") is not None  # redelivery


def test_a_redelivered_split_keeps_its_chunks_and_queues_those_not_graded(
    toy_ac_run: Run, judge: OpenAIJudge, django_capture_on_commit_callbacks: Capture,
) -> None:
    first, *_ = split(toy_ac_run, "task-1", django_capture_on_commit_callbacks)
    taken = chunk_claim(chunk_id=first.pk, token="chunk-a")
    assert taken is not None
    chunk_grading(chunk=taken, token="chunk-a", judge=judge)

    with django_capture_on_commit_callbacks(execute=False) as queued:
        again = run_grading(run=claimed(toy_ac_run, "task-1"), token="task-1", split_above=3)

    assert len(again.chunk_tasks) == len(queued) == 2  # the two not graded yet
    assert GradingChunk.objects.get(number=1).pk == first.pk
    assert GradingChunk.objects.count() == 3


def test_a_run_queued_again_leaves_its_old_chunks_nothing_to_write(
    toy_ac_run: Run, judge: OpenAIJudge, django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, _ = split(toy_ac_run, "task-1", django_capture_on_commit_callbacks)
    taken = chunk_claim(chunk_id=first.pk, token="chunk-a")
    assert taken is not None
    with django_capture_on_commit_callbacks(execute=False):
        enqueue_grading([toy_ac_run.pk])  # an organiser's edit, say

    # The chunk already taken stops before it links; the other is not taken any more.
    outcome = chunk_grading(chunk=taken, token="chunk-a", judge=judge)
    assert outcome.lost and outcome.report is None
    assert chunk_claim(chunk_id=second.pk, token="chunk-b") is None
    assert not NuggetEntailment.objects.exists()
    assert status_of(toy_ac_run) == RunStatus.QUEUED
    # The new round's split replaces the old chunks.
    assert len(split(toy_ac_run, "task-2", django_capture_on_commit_callbacks)) == 3
    assert set(GradingChunk.objects.values_list("round", flat=True)) == {"task-2"}


def test_a_chunk_the_judge_refuses_fails_the_run_and_its_round(
    toy_ac_run: Run, script: ScriptedJudge, django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, _ = split(toy_ac_run, "task-1", django_capture_on_commit_callbacks)
    script.faults.update({nugget: ["401"] for nugget in script.entailed})
    taken = chunk_claim(chunk_id=first.pk, token="chunk-a")
    assert taken is not None
    with ScriptedServer(script) as server:
        outcome = chunk_grading(chunk=taken, token="chunk-a", judge=make_judge(server))

    assert outcome.failure is not None and outcome.failure.permanent
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert run.status == RunStatus.FAILED and "(HTTP 401)" in run.failure_reason
    assert GradingChunk.objects.get(pk=first.pk).status == ChunkStatus.FAILED
    assert chunk_claim(chunk_id=second.pk, token="chunk-b") is None  # the round is over
