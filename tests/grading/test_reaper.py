"""The reaper on the database (grading.work.reaper): what it re-queues, what it sends, what it
fails and with which words. tests/grading/test_reaper_beat.py has it run by a real
`celery beat` against real workers that die."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django.utils.html import escape
from pytest_django import Settings as SettingsWrapper

from grading.models import ChunkStatus, GradingChunk, WorkerHeartbeat
from grading.tasks import grade_chunk, grade_run
from grading.work.chunks import chunk_claim
from grading.work.reaper import grading_reap
from grading.work.run_grading import run_grading
from grading.work.runs import (
    FAILED_WITHOUT_MESSAGE,
    RunClaim,
    run_claim_for_grading,
    run_grading_finish,
    runs_mark_queued,
)
from grading.work.workers import worker_heartbeat_record, worker_heartbeat_stopped
from submissions.models import Run, RunStatus
from tests.support import Personas, forget_other_workers, signed_in

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]

LONG_AGO = timedelta(hours=1)


@pytest.fixture(autouse=True)
def limits(settings: SettingsWrapper, db: None) -> None:
    settings.GRADING_STALE_SECONDS = 600
    settings.GRADING_MAX_REQUEUES = 3
    forget_other_workers()


def sent(callbacks: list[Any], task: Any) -> list[tuple[Any, ...]]:
    """The arguments of the tasks of kind `task` sent on commit."""
    return [callback.keywords["args"] for callback in callbacks
            if callback.func == task.apply_async]


def silent_claim(run: Run, token: str = "dead-worker", *, requeues: int = 0) -> Run:
    """`run` claimed by a task whose worker died an hour ago."""
    assert run_claim_for_grading(run_id=run.pk, token=token)
    Run.objects.filter(pk=run.pk).update(grading_heartbeat=timezone.now() - LONG_AGO,
                                         grading_requeues=requeues)
    return Run.objects.get(pk=run.pk)


def listening_worker(*, queues: str = "celery,grading,scoring") -> None:
    """A worker up for an hour, beating now, idle."""
    worker_heartbeat_record(hostname="idle@host", queues=queues.split(","),
                            started_at=timezone.now() - LONG_AGO)


def reap(capture: Capture) -> tuple[Any, list[Any]]:
    with capture(execute=False) as callbacks:
        report = grading_reap()
    return report, callbacks


# --- a run whose worker went silent --------------------------------------------------------
def test_a_run_whose_worker_went_silent_is_queued_again_with_a_new_task(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    silent_claim(toy_ac_run)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.requeued_runs == [toy_ac_run.pk]
    assert sent(callbacks, grade_run) == [(toy_ac_run.pk,)]
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.grading_token, run.grading_requeues) == (RunStatus.QUEUED, "", 1)
    # Its grader, were it only frozen, finds its claim gone at its next beat and stops.
    assert not RunClaim(token="dead-worker", run_id=run.pk).touch()


def test_a_run_whose_worker_beats_is_left_alone(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    assert run_claim_for_grading(run_id=toy_ac_run.pk, token="live-worker")
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []
    assert Run.objects.get(pk=toy_ac_run.pk).status == RunStatus.GRADING


def test_two_reapers_re_queue_a_silent_run_once(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    silent_claim(toy_ac_run)
    first, first_sent = reap(django_capture_on_commit_callbacks)
    second, second_sent = reap(django_capture_on_commit_callbacks)

    assert first.requeued_runs == [toy_ac_run.pk] and len(first_sent) == 1
    assert not second.changed and second_sent == []
    assert Run.objects.get(pk=toy_ac_run.pk).grading_requeues == 1


def test_a_reaper_that_read_a_silent_run_writes_nothing_once_its_worker_beats(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    silent_claim(toy_ac_run)
    # The worker beats between the reaper's read and its write.
    import grading.work.reaper as reaper

    requeue = reaper._requeue_run

    def beat_first(*args: Any, **kwargs: Any) -> bool:
        assert RunClaim(token="dead-worker", run_id=toy_ac_run.pk).touch()
        return requeue(*args, **kwargs)

    monkeypatch.setattr(reaper, "_requeue_run", beat_first)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.grading_token, run.grading_requeues) == (
        RunStatus.GRADING, "dead-worker", 0)


def test_after_the_limit_the_run_fails_and_says_why_to_its_team(
    toy_ac_run: Run, personas: Personas, django_capture_on_commit_callbacks: Capture,
) -> None:
    heartbeat = silent_claim(toy_ac_run, requeues=3).grading_heartbeat
    assert heartbeat is not None
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.failed_runs == [toy_ac_run.pk] and callbacks == []
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.grading_requeues) == (RunStatus.FAILED, 3)
    assert run.failure_reason.startswith(
        "its worker went silent 4 times: grading was re-queued 3 time(s) "
        "(GRADING_MAX_REQUEUES)")
    assert f"last heartbeat at {heartbeat:%Y-%m-%d %H:%M:%S} UTC" in run.failure_reason
    # The team reads it on the run's page and through the API.
    body = personas.client("participant_a").get(f"/api/v1/runs/{run.pk}/").json()
    assert (body["status"], body["failure_reason"]) == ("failed", run.failure_reason)
    page = signed_in(personas, "participant_a").get(f"/runs/{run.pk}/").content.decode()
    assert escape(run.failure_reason) in page


def test_a_person_asking_for_grading_again_starts_the_count_again(toy_ac_run: Run) -> None:
    silent_claim(toy_ac_run, requeues=3)
    assert runs_mark_queued(run_ids=[toy_ac_run.pk]) == 1
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.grading_requeues) == (RunStatus.QUEUED, 0)


def test_a_failure_that_came_without_a_message_still_says_why(toy_ac_run: Run) -> None:
    assert run_claim_for_grading(run_id=toy_ac_run.pk, token="t")
    run_grading_finish(run=toy_ac_run, token="t", failure=" ")
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.failure_reason) == (RunStatus.FAILED, FAILED_WITHOUT_MESSAGE)


# --- a queued run whose task was lost ---------------------------------------------------------
def queued_long_ago(run: Run, *, requeues: int = 0) -> None:
    runs_mark_queued(run_ids=[run.pk])
    Run.objects.filter(pk=run.pk).update(grading_heartbeat=timezone.now() - LONG_AGO,
                                         grading_requeues=requeues)


def test_a_queued_run_is_sent_again_when_idle_workers_never_took_it(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    queued_long_ago(toy_ac_run)
    listening_worker()
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.resent_runs == [toy_ac_run.pk]
    assert sent(callbacks, grade_run) == [(toy_ac_run.pk,)]
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.grading_requeues) == (RunStatus.QUEUED, 1)
    assert run.grading_heartbeat is not None
    assert run.grading_heartbeat > timezone.now() - timedelta(minutes=1)  # queued anew


def test_a_queued_run_waiting_behind_busy_workers_is_not_sent_again(
    toy_ac_run: Run, personas: Personas, django_capture_on_commit_callbacks: Capture,
) -> None:
    queued_long_ago(toy_ac_run)
    listening_worker()
    # Another run is being graded: the workers are busy, the queue is moving.
    other = Run.objects.get(pk=toy_ac_run.pk)
    other.pk, other.name, other.is_current = None, "WASEDA-AC-2", True
    other.save()
    assert run_claim_for_grading(run_id=other.pk, token="busy-worker")
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []
    assert Run.objects.get(pk=toy_ac_run.pk).grading_requeues == 0


@pytest.mark.parametrize("workers", ["none", "stopped", "not on the grading queue"])
def test_a_queued_run_is_not_sent_again_while_no_worker_would_take_it(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture, workers: str,
) -> None:
    queued_long_ago(toy_ac_run)
    if workers == "stopped":
        listening_worker()
        worker_heartbeat_stopped(hostname="idle@host")
    elif workers == "not on the grading queue":
        listening_worker(queues="celery,scoring")
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []  # sending again would only add to the queue


def test_a_queued_run_held_back_by_the_judge_s_validation_is_left_queued(
    toy_ac_run: Run, personas: Personas, django_capture_on_commit_callbacks: Capture,
) -> None:
    personas.campaign.judge_thresholds = {"entailment": {"kappa": 0.5}}
    personas.campaign.save()
    queued_long_ago(toy_ac_run)
    listening_worker()
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []


def test_a_queued_run_whose_task_keeps_being_lost_fails_and_says_so(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    queued_long_ago(toy_ac_run, requeues=3)
    listening_worker()
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.failed_runs == [toy_ac_run.pk] and callbacks == []
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert run.status == RunStatus.FAILED
    assert run.failure_reason.startswith("its grading task was lost 4 times")


# --- chunks of a large run --------------------------------------------------------------------
def split_run(run: Run, capture: Capture) -> list[GradingChunk]:
    """The toy run claimed by task "round-1" and split into three chunks (one question each)."""
    assert run_claim_for_grading(run_id=run.pk, token="round-1")
    with capture(execute=False):
        run_grading(run=Run.objects.get(pk=run.pk), token="round-1", split_above=3)
    return list(GradingChunk.objects.filter(run=run).order_by("number"))


def silent_chunk(chunk: GradingChunk, *, requeues: int = 0) -> None:
    assert chunk_claim(chunk_id=chunk.pk, token="dead-chunk-worker") is not None
    GradingChunk.objects.filter(pk=chunk.pk).update(heartbeat=timezone.now() - LONG_AGO,
                                                    requeues=requeues)


def test_a_silent_chunk_is_queued_again_and_its_run_keeps_its_round(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    first, *_ = split_run(toy_ac_run, django_capture_on_commit_callbacks)
    silent_chunk(first)
    # The run's own heartbeat is as old: its round is judged by its chunks' claims.
    Run.objects.filter(pk=toy_ac_run.pk).update(grading_heartbeat=timezone.now() - LONG_AGO)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.requeued_chunks == [first.pk] and report.requeued_runs == []
    assert sent(callbacks, grade_chunk) == [(first.pk,)]
    first.refresh_from_db()
    assert (first.status, first.token, first.requeues) == (ChunkStatus.QUEUED, "", 1)
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.grading_token) == (RunStatus.GRADING, "round-1")
    assert chunk_claim(chunk_id=first.pk, token="new-task") is not None  # the new task takes it


def test_a_chunk_silent_past_the_limit_fails_with_its_run_naming_the_chunk(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    _, second, _ = split_run(toy_ac_run, django_capture_on_commit_callbacks)
    silent_chunk(second, requeues=3)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.failed_chunks == [second.pk] and callbacks == []
    second.refresh_from_db()
    assert second.status == ChunkStatus.FAILED
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert run.status == RunStatus.FAILED
    assert run.failure_reason.startswith(
        "chunk 2 of 3 (questions D002 to D002): its worker went silent 4 times")


def test_a_queued_chunk_whose_task_was_lost_is_sent_again(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    chunks = split_run(toy_ac_run, django_capture_on_commit_callbacks)
    GradingChunk.objects.filter(run=toy_ac_run).update(heartbeat=timezone.now() - LONG_AGO)
    Run.objects.filter(pk=toy_ac_run.pk).update(grading_heartbeat=timezone.now() - LONG_AGO)
    listening_worker()
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert sorted(report.resent_chunks) == [c.pk for c in chunks]
    assert sorted(sent(callbacks, grade_chunk)) == [(c.pk,) for c in chunks]
    assert report.requeued_runs == [] and report.resent_runs == []


# --- the workers' heartbeats -------------------------------------------------------------------
def test_a_worker_s_heartbeat_is_one_row_kept_up_to_date() -> None:
    started = timezone.now() - LONG_AGO
    worker_heartbeat_record(hostname="w1@host", queues=["celery", "grading"], started_at=started)
    first = WorkerHeartbeat.objects.get().last_beat
    worker_heartbeat_record(hostname="w1@host", queues=["celery", "grading"], started_at=started)
    [row] = WorkerHeartbeat.objects.all()
    assert row.last_beat >= first and row.queue_names == ["celery", "grading"]
    worker_heartbeat_stopped(hostname="w1@host")
    assert WorkerHeartbeat.objects.get().stopped_at is not None


def test_the_reaper_forgets_workers_silent_for_a_week() -> None:
    worker_heartbeat_record(hostname="old@host", queues=["grading"],
                            started_at=timezone.now() - timedelta(days=9))
    WorkerHeartbeat.objects.update(last_beat=timezone.now() - timedelta(days=8))
    listening_worker()
    grading_reap()
    assert list(WorkerHeartbeat.objects.values_list("hostname", flat=True)) == ["idle@host"]
