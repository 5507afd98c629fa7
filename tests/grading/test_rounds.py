"""Rounds of grading in one process: parts planned when grading is asked for, claimed once,
kept alive by a heartbeat, graded in any order, replaced by a new round, failed as a whole
(grading.work); tests/grading/test_grading_claims.py has real processes share one run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.utils import timezone
from pytest_django import Settings as SettingsWrapper

from grading.models import AnswerEvaluation, GradingJob, GradingPart, NuggetEntailment, PartStatus
from grading.openai_judge import OpenAIJudge
from grading.selectors import marked_run
from grading.work.claims import claim_heartbeat, claim_of, part_claim
from grading.work.part_grading import part_grading
from grading.work.rounds import campaign_grading_queue, chunk_plan, enqueue_grading, rounds_start
from submissions.models import Run, RunStatus
from tests.grading.fixtures import make_judge
from tests.grading.rounds import claimed_part, part_of
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]

#: Its marks as one pass over the whole run gives them (tests/data/toy/WASEDA-AC-1.marked).
TOY_MARKS = "RRBNBRRN"


def in_parts(run: Run, capture: Capture, settings: SettingsWrapper,
             size: int = 3) -> list[GradingPart]:
    """Grading asked for with parts of at most `size` nugget records: a task per part."""
    settings.GRADING_CHUNK_NUGGETS = size
    with capture(execute=False) as queued:
        tasks = enqueue_grading([run.pk])
    assert len(tasks) == len(queued)
    return list(GradingPart.objects.filter(job__run=run).order_by("number"))


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


def test_a_run_that_fits_in_one_chunk_is_one_part_graded_by_its_own_task(
    toy_ac_run: Run, judge: OpenAIJudge, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    [part] = in_parts(toy_ac_run, django_capture_on_commit_callbacks, settings, size=8)
    assert (part.qids, part.status, status_of(toy_ac_run)) == (None, PartStatus.QUEUED,
                                                               RunStatus.QUEUED)
    taken = part_claim(part_id=part.pk, token="task-1")
    assert taken is not None
    outcome = part_grading(part=taken, token="task-1", judge=judge, queue_scoring=False)
    assert outcome.report is not None and outcome.run_graded
    assert (status_of(toy_ac_run), marks(toy_ac_run)) == (RunStatus.GRADED, TOY_MARKS)


def test_chunks_graded_in_any_order_grade_the_run_as_one_pass_does(
    toy_ac_run: Run, judge: OpenAIJudge, script: ScriptedJudge, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, third = in_parts(toy_ac_run, django_capture_on_commit_callbacks, settings)
    assert [(p.qids, p.nuggets) for p in (first, second, third)] == [
        (["D001"], 3), (["D002"], 2), (["D003"], 3)]

    ended = []
    for number, part in enumerate((third, first, second)):
        taken = part_claim(part_id=part.pk, token=f"part-task-{number}")
        assert taken is not None
        with django_capture_on_commit_callbacks(execute=False) as queued:
            outcome = part_grading(part=taken, token=f"part-task-{number}", judge=judge,
                                   worker=f"worker-{number % 2}")
        ended.append((outcome.run_graded, status_of(toy_ac_run), len(queued)))

    # Only the last part ends the run, and the round: scoring is queued then.
    assert ended == [(False, RunStatus.GRADING, 0), (False, RunStatus.GRADING, 0),
                     (True, RunStatus.GRADED, 1)]
    assert marks(toy_ac_run) == TOY_MARKS
    assert NuggetEntailment.objects.count() == 8 and AnswerEvaluation.objects.count() == 3
    # Each question asked once: the 6 nuggets the names-and-numbers rule leaves to the
    # judge, 3 answers, 2 + 3 relevance calls for the entailed nuggets of the two
    # correct answers (D001, D003).
    assert len(script.calls) == 14 and set(script.calls.values()) == {1}
    parts = GradingPart.objects.filter(job__run=toy_ac_run).order_by("number")
    assert [(p.status, p.judge_calls, p.graded_by) for p in parts] == [
        (PartStatus.GRADED, 3 + 1, "worker-1"), (PartStatus.GRADED, 2 + 1, "worker-0"),
        (PartStatus.GRADED, 3 + 1, "worker-0")]


def test_a_part_is_claimed_once_but_its_own_redelivered_task_may_take_it_again(
    toy_ac_run: Run,
) -> None:
    [part] = rounds_start(run_ids=[toy_ac_run.pk])
    assert part_claim(part_id=part, token="task-1") is not None
    assert part_claim(part_id=part, token="task-2") is None
    assert part_claim(part_id=part, token="task-1") is not None  # redelivery
    assert status_of(toy_ac_run) == RunStatus.GRADING


def test_a_claim_whose_heartbeat_went_silent_may_be_taken_over(
    toy_ac_run: Run, settings: SettingsWrapper
) -> None:
    settings.GRADING_STALE_SECONDS = 60
    part = claimed_part(toy_ac_run, "task-1")
    GradingPart.objects.filter(pk=part.pk).update(
        heartbeat=timezone.now() - timedelta(seconds=59))
    assert part_claim(part_id=part.pk, token="task-2") is None
    GradingPart.objects.filter(pk=part.pk).update(
        heartbeat=timezone.now() - timedelta(seconds=61))
    assert part_claim(part_id=part.pk, token="task-2") is not None
    assert campaign_grading_queue(campaign=toy_ac_run.track.campaign) == []  # task-2 is alive


@pytest.mark.django_db(transaction=True)
def test_a_grading_task_keeps_its_claim_alive_while_it_works(
    toy_ac_run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("grading.work.claims.HEARTBEAT_EVERY", 0.02)
    # The heartbeat thread reads the clock to write a beat: that tells the test one is
    # under way, and leaving the block joins the thread, so the beat is then stored.
    beating = threading.Event()

    def now() -> datetime:
        if threading.current_thread().name.startswith("heartbeat-part-"):
            beating.set()
        return timezone.now()

    part = claimed_part(toy_ac_run, "task-1")
    monkeypatch.setattr("grading.work.claims.timezone", SimpleNamespace(now=now))
    old = timezone.now() - timedelta(hours=1)
    GradingPart.objects.filter(pk=part.pk).update(heartbeat=old)
    GradingJob.objects.filter(pk=part.job_id).update(heartbeat=old)
    with claim_heartbeat(claim_of(part, token="task-1"), name=f"heartbeat-part-{part.pk}"):
        assert beating.wait(timeout=60), "no heartbeat"
    assert part_of(toy_ac_run).heartbeat > old
    assert GradingJob.objects.get(pk=part.job_id).heartbeat > old  # the round's too
    assert part_claim(part_id=part.pk, token="task-2") is None


def test_a_run_queued_again_leaves_its_old_round_nothing_to_write(
    toy_ac_run: Run, judge: OpenAIJudge, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, _ = in_parts(toy_ac_run, django_capture_on_commit_callbacks, settings)
    taken = part_claim(part_id=first.pk, token="part-a")
    assert taken is not None
    with django_capture_on_commit_callbacks(execute=False):
        enqueue_grading([toy_ac_run.pk])  # an organiser's edit, say

    # The part already taken stops before it links; the other is gone with its round.
    outcome = part_grading(part=taken, token="part-a", judge=judge)
    assert outcome.lost and outcome.report is None
    assert part_claim(part_id=second.pk, token="part-b") is None
    assert not NuggetEntailment.objects.exists()
    assert status_of(toy_ac_run) == RunStatus.QUEUED
    # The new round has parts of its own, and one job per run.
    assert GradingJob.objects.filter(run=toy_ac_run).count() == 1
    assert not GradingPart.objects.filter(pk__in=[first.pk, second.pk]).exists()
    assert GradingPart.objects.filter(job__run=toy_ac_run).count() == 3


def test_a_part_the_judge_refuses_fails_the_run_and_its_round(
    toy_ac_run: Run, script: ScriptedJudge, settings: SettingsWrapper,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    first, second, _ = in_parts(toy_ac_run, django_capture_on_commit_callbacks, settings)
    script.faults.update({nugget: ["401"] for nugget in script.entailed})
    taken = part_claim(part_id=first.pk, token="part-a")
    assert taken is not None
    with ScriptedServer(script) as server:
        outcome = part_grading(part=taken, token="part-a", judge=make_judge(server))

    assert outcome.failure is not None and outcome.failure.permanent
    run = Run.objects.get(pk=toy_ac_run.pk)
    assert run.status == RunStatus.FAILED and "(HTTP 401)" in run.failure_reason
    assert GradingPart.objects.get(pk=first.pk).status == PartStatus.FAILED
    assert part_claim(part_id=second.pk, token="part-b") is None  # the round is over


def test_only_current_accepted_runs_of_graded_kinds_get_a_round(toy_ac_run: Run) -> None:
    assert rounds_start(run_ids=[Run.objects.get(name="WASEDA-PO-1").pk]) == []
    toy_ac_run.withdrawn = True  # an organiser's re-run of a withdrawn run still grades it
    toy_ac_run.save()
    assert len(rounds_start(run_ids=[toy_ac_run.pk])) == 1
    Run.objects.filter(pk=toy_ac_run.pk).update(is_current=False)
    assert rounds_start(run_ids=[toy_ac_run.pk]) == []
