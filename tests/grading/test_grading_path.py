"""One grading path (`part_grading`) for the task and the command: the second judge and
"score now" are decided there; and one edit path (`judgment_edit`) that queues its runs
for re-grading itself, whoever calls it."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from pytest_django import Settings as SettingsWrapper

from campaign.models import Track
from grading.models import AnswerEvaluation, GradingPart, JudgeSlot, NuggetEntailment, PartStatus
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import GradeReport, run_grade
from grading.review.edits import judgment_confirm, judgment_edit
from grading.work.claims import part_claim
from grading.work.part_grading import part_grading
from grading.work.rounds import campaign_grading_queue, enqueue_grading
from scoring.models import Evaluation
from submissions.models import Run, RunStatus
from tests.grading.fixtures import ESA_LAUNCH, judge_from_marked_example, judgment_of
from tests.grading.rounds import claimed_part, part_of
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas, Upload, example

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


def test_a_graded_run_that_ends_the_round_queues_scoring(
    toy_ac_run: Run, judge: OpenAIJudge, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as queued:
        outcome = part_grading(part=claimed_part(toy_ac_run), token="task-1", judge=judge)

    assert isinstance(outcome.report, GradeReport) and outcome.failure is None
    assert (outcome.report.entailment_calls, outcome.report.answer_calls) == (8, 3)
    assert outcome.scoring_task is not None and len(queued) == 1
    toy_ac_run.refresh_from_db()
    assert (toy_ac_run.status, part_of(toy_ac_run).status) == (RunStatus.GRADED,
                                                               PartStatus.GRADED)


def test_no_scoring_while_another_run_of_the_campaign_is_being_graded(
    personas: Personas, toy_ac_run: Run, upload: Upload, judge: OpenAIJudge,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    other = upload("participant_b", "KYOTO-AC-1", example("WASEDA-AC-1"), track="ac")
    assert other.status_code == 201, other.json()
    claimed_part(Run.objects.get(pk=other.json()["id"]), token="task-2")

    with django_capture_on_commit_callbacks(execute=False) as queued:
        outcome = part_grading(part=claimed_part(toy_ac_run), token="task-1", judge=judge)

    assert outcome.report is not None and outcome.scoring_task is None and queued == []


def test_the_command_s_path_leaves_scoring_to_the_command(
    toy_ac_run: Run, judge: OpenAIJudge, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as queued:
        outcome = part_grading(part=claimed_part(toy_ac_run), token="task-1", judge=judge,
                              queue_scoring=False)
    assert outcome.report is not None and outcome.scoring_task is None and queued == []


def test_the_tracks_second_judge_labels_the_run_beside_the_official_one(
    toy_ac_run: Run, judge: OpenAIJudge
) -> None:
    second = judge_from_marked_example()
    with ScriptedServer(second) as server:
        Track.objects.filter(pk=toy_ac_run.track_id).update(
            second_judge_base_url=server.base_url, second_judge_model="second-judge")
        outcome = part_grading(part=claimed_part(toy_ac_run), token="task-1", judge=judge)

    assert outcome.report is not None
    # Every nugget and answer has a label from each judge.
    nuggets = NuggetEntailment.objects.filter(nugget__run=toy_ac_run)
    answers = AnswerEvaluation.objects.filter(answer__run=toy_ac_run)
    for links, records in ((nuggets, 8), (answers, 3)):
        slots = sorted(links.values_list("slot", flat=True))
        assert slots == [JudgeSlot.OFFICIAL] * records + [JudgeSlot.SECOND] * records
    assert second.calls  # asked by the second judge's own client


def test_a_second_judge_that_refuses_fails_the_run_and_is_named(
    toy_ac_run: Run, judge: OpenAIJudge
) -> None:
    second = judge_from_marked_example()
    second.faults.update({nugget: ["401"] for nugget in second.entailed})
    with ScriptedServer(second) as server:
        Track.objects.filter(pk=toy_ac_run.track_id).update(
            second_judge_base_url=server.base_url, second_judge_model="second-judge")
        outcome = part_grading(part=claimed_part(toy_ac_run), token="task-1", judge=judge,
                              may_retry=True)

    assert outcome.failure is not None and outcome.failure.permanent and not outcome.retry
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.status == RunStatus.FAILED
    assert toy_ac_run.failure_reason.startswith("the second judge (second-judge) failed: 6 of 8")
    assert "(HTTP 401)" in toy_ac_run.failure_reason


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The grading tasks sent to the broker (their arguments), instead of sending them."""
    calls: list[tuple[int, ...]] = []
    monkeypatch.setattr("grading.tasks.grade_part.apply_async",
                        lambda args, task_id: calls.append(tuple(args)))
    return calls


def test_an_edit_queues_its_runs_for_grading_once_it_commits(
    personas: Personas, toy_ac_run: Run, judge: OpenAIJudge,
    django_capture_on_commit_callbacks: Capture, sent: list[tuple[int, ...]],
) -> None:
    run_grade(run=toy_ac_run, judge=judge)

    with django_capture_on_commit_callbacks(execute=False) as queued:
        judgment_edit(judgment=judgment_of(ESA_LAUNCH), user=personas.organiser,
                      changes={"entailed": True}, reason="", note="another source says so")
    assert sent == []  # nothing before the commit
    assert status_of(toy_ac_run) == RunStatus.QUEUED  # but the run shows it waits
    for callback in queued:
        callback()

    assert sent == [(part_of(toy_ac_run).pk,)]


def test_a_confirmation_queues_them_too(
    personas: Personas, toy_ac_run: Run, judge: OpenAIJudge,
    django_capture_on_commit_callbacks: Capture, sent: list[tuple[int, ...]],
) -> None:
    run_grade(run=toy_ac_run, judge=judge)

    with django_capture_on_commit_callbacks(execute=True):
        judgment_confirm(judgment=judgment_of(ESA_LAUNCH), user=personas.organiser)

    assert sent == [(part_of(toy_ac_run).pk,)]


def status_of(run: Run) -> str:
    return Run.objects.get(pk=run.pk).status


def test_enqueuing_marks_the_current_ac_runs_queued_and_sends_their_tasks_on_commit(
    toy_ac_run: Run, django_capture_on_commit_callbacks: Capture,
    sent: list[tuple[int, ...]],
) -> None:
    pr_run = Run.objects.get(name="WASEDA-PO-1")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        enqueue_grading([toy_ac_run.pk, pr_run.pk])

    assert (status_of(toy_ac_run), status_of(pr_run)) == (RunStatus.QUEUED, RunStatus.VALID)
    assert sent == []
    for callback in queued:
        callback()
    assert sent == [(part_of(toy_ac_run).pk,)]  # a PR run is scored, never graded
    assert not GradingPart.objects.filter(job__run=pr_run).exists()


def test_grading_asked_for_through_the_api_queues_the_run(
    personas: Personas, toy_ac_run: Run, sent: list[tuple[int, ...]],
    django_capture_on_commit_callbacks: Capture,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = personas.client("organiser").post("/api/v1/campaigns/toy/grading/")

    assert response.status_code == 202, response.json()
    part = part_of(toy_ac_run)
    assert sent == [(part.pk,)]
    assert status_of(toy_ac_run) == RunStatus.QUEUED
    assert part_claim(part_id=part.pk, token="task-1") is not None  # its task takes it
    assert status_of(toy_ac_run) == RunStatus.GRADING


def test_the_round_ends_with_the_last_queued_run_not_before(
    personas: Personas, toy_ac_run: Run, upload: Upload, judge: OpenAIJudge,
    django_capture_on_commit_callbacks: Capture, sent: list[tuple[int, ...]],
) -> None:
    response = upload("participant_b", "KYOTO-AC-1", example("WASEDA-AC-1"), track="ac")
    assert response.status_code == 201, response.json()
    other = Run.objects.get(pk=response.json()["id"])
    enqueue_grading([toy_ac_run.pk, other.pk])

    with django_capture_on_commit_callbacks(execute=False) as queued:
        first = part_grading(part=taken(toy_ac_run, "task-1"), token="task-1", judge=judge)
    # KYOTO-AC-1 is QUEUED, not yet GRADING: the round is not over.
    assert first.report is not None and first.scoring_task is None and queued == []
    assert status_of(other) == RunStatus.QUEUED

    with django_capture_on_commit_callbacks(execute=False) as queued:
        last = part_grading(part=taken(other, "task-2"), token="task-2", judge=judge)
    assert last.scoring_task is not None and len(queued) == 1


def taken(run: Run, token: str) -> GradingPart:
    """The part of the run's round, claimed by its task `token`."""
    part = part_claim(part_id=part_of(run).pk, token=token)
    assert part is not None
    return part


def test_a_run_queued_again_while_graded_is_graded_again_and_its_first_grader_stops(
    toy_ac_run: Run, judge: OpenAIJudge, django_capture_on_commit_callbacks: Capture,
    sent: list[tuple[int, ...]],
) -> None:
    part = claimed_part(toy_ac_run, token="task-1")
    enqueue_grading([toy_ac_run.pk])  # say, an organiser's edit while task-1 works

    with django_capture_on_commit_callbacks(execute=False) as queued:
        first = part_grading(part=part, token="task-1", judge=judge)
    assert first.lost and first.report is None and queued == []
    assert status_of(toy_ac_run) == RunStatus.QUEUED  # left for the task queued with the edit

    with django_capture_on_commit_callbacks(execute=False) as queued:
        again = part_grading(part=taken(toy_ac_run, "task-2"), token="task-2", judge=judge)
    assert again.scoring_task is not None and len(queued) == 1
    assert status_of(toy_ac_run) == RunStatus.GRADED


def test_a_finish_whose_part_was_taken_over_records_nothing(
    toy_ac_run: Run, judge: OpenAIJudge, settings: SettingsWrapper,
) -> None:
    part = claimed_part(toy_ac_run, token="task-1")
    settings.GRADING_STALE_SECONDS = -1  # task-1 looks dead to everyone
    taken(toy_ac_run, "task-2")

    assert part_grading(part=part, token="task-1", judge=judge, queue_scoring=False).lost

    now = part_of(toy_ac_run)
    assert (status_of(toy_ac_run), now.status, now.token) == (
        RunStatus.GRADING, PartStatus.GRADING, "task-2")


def test_a_queued_run_whose_task_was_lost_is_graded_by_the_command(
    toy_ac_run: Run, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch,
    sent: list[tuple[int, ...]],
) -> None:
    enqueue_grading([toy_ac_run.pk])  # the task never reaches a worker
    campaign = toy_ac_run.track.campaign
    assert campaign_grading_queue(campaign=campaign) == [toy_ac_run.pk]

    monkeypatch.setattr("sys.stderr", io.StringIO())  # no progress bars
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
        call_command("grade", campaign.slug, stdout=io.StringIO(), stderr=io.StringIO())

    assert status_of(toy_ac_run) == RunStatus.SCORED  # graded in-process, then scored
    assert Evaluation.objects.filter(track=toy_ac_run.track).exists()
    assert campaign_grading_queue(campaign=campaign) == []
