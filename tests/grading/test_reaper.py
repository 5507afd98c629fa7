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

from grading.models import GradingJob, GradingPart, PartStatus, WorkerHeartbeat
from grading.tasks import grade_part
from grading.work.claims import claim_of, part_claim
from grading.work.reaper import grading_reap
from grading.work.rounds import FAILED_WITHOUT_MESSAGE, part_fail, rounds_start
from grading.work.workers import worker_heartbeat_record, worker_heartbeat_stopped
from submissions.models import Run, RunStatus
from tests.grading.rounds import claimed_part, part_of
from tests.support import Personas, forget_other_workers, signed_in

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]

LONG_AGO = timedelta(hours=1)


@pytest.fixture(autouse=True)
def limits(settings: SettingsWrapper, db: None) -> None:
    settings.GRADING_STALE_SECONDS = 600
    settings.GRADING_MAX_REQUEUES = 3
    forget_other_workers()


def sent(callbacks: list[Any]) -> list[tuple[Any, ...]]:
    """The arguments of the grading tasks sent on commit."""
    return [callback.keywords["args"] for callback in callbacks
            if callback.func == grade_part.apply_async]


def gone_quiet(part: GradingPart, *, requeues: int = 0) -> GradingPart:
    """`part`, and its round, with no sign of life for an hour."""
    GradingJob.objects.filter(pk=part.job_id).update(heartbeat=timezone.now() - LONG_AGO)
    GradingPart.objects.filter(pk=part.pk).update(heartbeat=timezone.now() - LONG_AGO,
                                                  requeues=requeues)
    return GradingPart.objects.select_related("job__run").get(pk=part.pk)


def silent_claim(run: Run, token: str = "dead-worker", *, requeues: int = 0) -> GradingPart:
    """`run`'s round claimed by a task whose worker died an hour ago."""
    return gone_quiet(claimed_part(run, token), requeues=requeues)


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
    part = silent_claim(toy_ac_run)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.requeued == [part.pk]
    assert sent(callbacks) == [(part.pk,)]
    now = part_of(toy_ac_run)
    assert (now.status, now.token, now.requeues) == (PartStatus.QUEUED, "", 1)
    assert Run.objects.get(pk=toy_ac_run.pk).status == RunStatus.QUEUED
    # Its grader, were it only frozen, finds its claim gone at its next beat and stops.
    assert not claim_of(part, token="dead-worker").touch()


def test_a_run_whose_worker_beats_is_left_alone(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    claimed_part(toy_ac_run, "live-worker")
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []
    assert Run.objects.get(pk=toy_ac_run.pk).status == RunStatus.GRADING


def test_two_reapers_re_queue_a_silent_run_once(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    part = silent_claim(toy_ac_run)
    first, first_sent = reap(django_capture_on_commit_callbacks)
    second, second_sent = reap(django_capture_on_commit_callbacks)

    assert first.requeued == [part.pk] and len(first_sent) == 1
    assert not second.changed and second_sent == []
    assert part_of(toy_ac_run).requeues == 1


def test_a_reaper_that_read_a_silent_run_writes_nothing_once_its_worker_beats(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    part = silent_claim(toy_ac_run)
    # The worker beats between the reaper's read and its write.
    import grading.work.reaper as reaper

    requeue = reaper._requeue

    def beat_first(*args: Any, **kwargs: Any) -> bool:
        assert claim_of(part, token="dead-worker").touch()
        return requeue(*args, **kwargs)

    monkeypatch.setattr(reaper, "_requeue", beat_first)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []
    now = part_of(toy_ac_run)
    assert (now.status, now.token, now.requeues) == (PartStatus.GRADING, "dead-worker", 0)
    assert Run.objects.get(pk=toy_ac_run.pk).status == RunStatus.GRADING


def test_after_the_limit_the_run_fails_and_says_why_to_its_team(
    toy_ac_run: Run, personas: Personas, django_capture_on_commit_callbacks: Capture,
) -> None:
    heartbeat = silent_claim(toy_ac_run, requeues=3).heartbeat
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.failed_runs == [toy_ac_run.pk] and callbacks == []
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, part_of(toy_ac_run).requeues) == (RunStatus.FAILED, 3)
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
    assert len(rounds_start(run_ids=[toy_ac_run.pk])) == 1
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, part_of(toy_ac_run).requeues) == (RunStatus.QUEUED, 0)


def test_a_failure_that_came_without_a_message_still_says_why(toy_ac_run: Run) -> None:
    assert part_fail(part=claimed_part(toy_ac_run, "t"), token="t", reason=" ")
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert (run.status, run.failure_reason) == (RunStatus.FAILED, FAILED_WITHOUT_MESSAGE)


# --- a queued run whose task was lost ---------------------------------------------------------
def queued_long_ago(run: Run, *, requeues: int = 0) -> GradingPart:
    [part] = rounds_start(run_ids=[run.pk])
    return gone_quiet(GradingPart.objects.get(pk=part), requeues=requeues)


def test_a_queued_run_is_sent_again_when_idle_workers_never_took_it(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
) -> None:
    part = queued_long_ago(toy_ac_run)
    listening_worker()
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.resent == [part.pk]
    assert sent(callbacks) == [(part.pk,)]
    now = part_of(toy_ac_run)
    assert (now.status, now.requeues) == (PartStatus.QUEUED, 1)
    assert Run.objects.get(pk=toy_ac_run.pk).status == RunStatus.QUEUED
    assert now.heartbeat > timezone.now() - timedelta(minutes=1)  # queued anew


def test_a_queued_run_waiting_behind_busy_workers_is_not_sent_again(
    toy_ac_run: Run, personas: Personas, django_capture_on_commit_callbacks: Capture,
) -> None:
    queued_long_ago(toy_ac_run)
    listening_worker()
    # Another run is being graded: the workers are busy, the queue is moving.
    other = Run.objects.get(pk=toy_ac_run.pk)
    other.pk, other.name, other.is_current = None, "WASEDA-AC-2", True
    other.save()
    claimed_part(other, "busy-worker")
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert not report.changed and callbacks == []
    assert part_of(toy_ac_run).requeues == 0


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
def split_run(run: Run, settings: SettingsWrapper) -> list[GradingPart]:
    """The toy run's round in three chunks (one question each), QUEUED."""
    settings.GRADING_CHUNK_NUGGETS = 3
    rounds_start(run_ids=[run.pk])
    return list(GradingPart.objects.filter(job__run=run).order_by("number"))


def silent_chunk(chunk: GradingPart, *, requeues: int = 0) -> GradingPart:
    assert part_claim(part_id=chunk.pk, token="dead-chunk-worker") is not None
    return gone_quiet(chunk, requeues=requeues)


def test_a_silent_chunk_is_queued_again_and_its_run_keeps_its_round(
    toy_ac_run: Run, settings: SettingsWrapper, django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, _ = split_run(toy_ac_run, settings)
    assert part_claim(part_id=second.pk, token="live-chunk-worker") is not None
    silent_chunk(first)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.requeued == [first.pk]
    assert sent(callbacks) == [(first.pk,)]
    first.refresh_from_db()
    assert (first.status, first.token, first.requeues) == (PartStatus.QUEUED, "", 1)
    # The other chunk still grades: the run stays GRADING, in the same round.
    assert Run.objects.get(pk=toy_ac_run.pk).status == RunStatus.GRADING
    assert part_of(toy_ac_run, 2).token == "live-chunk-worker"
    assert part_claim(part_id=first.pk, token="new-task") is not None  # the new task takes it


def test_a_chunk_silent_past_the_limit_fails_with_its_run_naming_the_chunk(
    toy_ac_run: Run, settings: SettingsWrapper, django_capture_on_commit_callbacks: Capture,
) -> None:
    _, second, third = split_run(toy_ac_run, settings)
    silent_chunk(second, requeues=3)
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert report.failed == [second.pk] and callbacks == []
    second.refresh_from_db()
    assert second.status == PartStatus.FAILED
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert run.status == RunStatus.FAILED
    assert run.failure_reason.startswith(
        "chunk 2 of 3 (questions D002 to D002): its worker went silent 4 times")
    assert part_claim(part_id=third.pk, token="late-task") is None  # the round is over


def test_a_queued_chunk_whose_task_was_lost_is_sent_again(
    toy_ac_run: Run, settings: SettingsWrapper, django_capture_on_commit_callbacks: Capture,
) -> None:
    chunks = [gone_quiet(chunk) for chunk in split_run(toy_ac_run, settings)]
    listening_worker()
    report, callbacks = reap(django_capture_on_commit_callbacks)

    assert sorted(report.resent) == [c.pk for c in chunks]
    assert sorted(sent(callbacks)) == [(c.pk,) for c in chunks]
    assert report.requeued == [] and report.failed_runs == []


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
