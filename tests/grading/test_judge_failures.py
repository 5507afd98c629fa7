"""A judge that fails. A refusal (401: bad API key; 404: unknown model) fails the run at
once, one request per input and no retry, with the judge's own words on the run, where
the team and the organisers see them; a transient failure is retried by the task; a run
graded later loses its reason."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from django.utils.html import escape

from grading.judge import JudgeUnavailable
from grading.llm.calls import JudgeConfig
from grading.openai_judge import OpenAIJudge
from grading.tasks import grade_part
from submissions.models import Run, RunStatus
from tests.grading.rounds import queued_part
from tests.grading.scripted_server import BAD_API_KEY, UNKNOWN_MODEL, ScriptedServer, Status
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

#: tests/data/toy/WASEDA-AC-1 has eight nuggets, each a distinct entailment input; the
#: answers wait for them, so a judge that refuses every request is asked eight times.
NUGGETS = 8
# Those the judge is asked about: the names-and-numbers rule decides two (the toy's B
# nuggets name what their passages never mention) without a call.
ASKED = 6
MODEL = "scripted-judge"

#: (status, the server's message) of each refusal.
REFUSALS = {
    "bad API key": (401, BAD_API_KEY),
    "unknown model": (404, UNKNOWN_MODEL.format(model=MODEL)),
}


def refusing_judge(refusal: str) -> ScriptedServer:
    status, message = REFUSALS[refusal]
    return ScriptedServer([Status(status, message)])  # the last step repeats: every request


def grader_at(fake: ScriptedServer) -> Any:
    return override_settings(GRADER_BASE_URL=fake.base_url, GRADER_MODEL=MODEL,
                             GRADER_TIMEOUT=30)


def assert_refusal_recorded(run: Run, refusal: str) -> None:
    status, message = REFUSALS[refusal]
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.failure_reason.startswith(
        f"{ASKED} of {NUGGETS} entailment judge call(s) failed; the first: "
        f"entailment judgment refused by the server (HTTP {status}): ")
    assert message in run.failure_reason


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_a_refusing_judge_fails_the_task_at_once_and_says_why(
    personas: Personas, toy_ac_run: Run, refusal: str
) -> None:
    with refusing_judge(refusal) as fake, grader_at(fake):
        result = grade_part.apply(args=(queued_part(toy_ac_run),))

    # One request per input and no retry, neither by the client nor by the task (an
    # eager task retries at once: a retry would show here as more requests).
    assert len(fake.requests) == ASKED
    assert result.state == "FAILURE" and isinstance(result.result, JudgeUnavailable)
    assert result.result.permanent
    assert_refusal_recorded(toy_ac_run, refusal)

    # The team sees why, in the API and on the run's page; so do the organisers.
    reason = toy_ac_run.failure_reason
    body = personas.client("participant_a").get(f"/api/v1/runs/{toy_ac_run.pk}/").json()
    assert (body["status"], body["failure_reason"]) == ("failed", reason)
    page = signed_in(personas, "participant_a").get(f"/runs/{toy_ac_run.pk}/").content.decode()
    assert f'<dd class="failure-reason">{escape(reason)}</dd>' in page
    dashboard = signed_in(personas, "organiser").get("/campaigns/toy/dashboard/")
    assert escape(reason) in dashboard.content.decode()
    progress = personas.client("organiser").get("/api/v1/campaigns/toy/grading/").json()
    assert progress["runs"][0]["failure_reason"] == reason


def test_a_transient_failure_is_retried_by_the_task_then_fails_with_its_reason(
    toy_ac_run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedServer([Status(500, "the GPU fell over")]) as fake:
        # The client's own retries off, so each task attempt asks once per input.
        judge = OpenAIJudge(JudgeConfig(base_url=fake.base_url, model=MODEL, max_retries=0))
        monkeypatch.setattr("grading.work.part_grading.official_judge", lambda campaign=None: judge)
        result = grade_part.apply(args=(queued_part(toy_ac_run),))

    assert grade_part.max_retries == 5
    assert len(fake.requests) == ASKED * 6  # the first attempt and five retries
    assert result.state == "FAILURE" and isinstance(result.result, JudgeUnavailable)
    assert not result.result.permanent
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.status == RunStatus.FAILED
    assert "HTTP 500" in toy_ac_run.failure_reason
    assert "the GPU fell over" in toy_ac_run.failure_reason


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_the_command_prints_the_reason_and_exits_non_zero(
    toy_ac_run: Run, refusal: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())  # no progress bars
    stderr = io.StringIO()
    with refusing_judge(refusal) as fake, grader_at(fake), pytest.raises(
        CommandError, match=r"^1 run\(s\) could not be graded: WASEDA-AC-1\. Grade them "
                            r"again with `manage\.py grade toy`"
    ):
        call_command("grade", "toy", stdout=io.StringIO(), stderr=stderr)

    assert len(fake.requests) == ASKED
    assert_refusal_recorded(toy_ac_run, refusal)
    assert f"WASEDA-AC-1: run marked failed: {toy_ac_run.failure_reason}" in stderr.getvalue()


def test_a_run_graded_after_a_failure_loses_its_reason(
    personas: Personas, toy_ac_run: Run, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    with refusing_judge("bad API key") as fake, grader_at(fake), pytest.raises(CommandError):
        call_command("grade", "toy", stdout=io.StringIO(), stderr=io.StringIO())
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.failure_reason

    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL=MODEL):
        call_command("grade", "toy", stdout=io.StringIO(), stderr=io.StringIO())

    toy_ac_run.refresh_from_db()
    assert (toy_ac_run.status, toy_ac_run.failure_reason) == (RunStatus.SCORED, "")
    body = personas.client("participant_a").get(f"/api/v1/runs/{toy_ac_run.pk}/").json()
    assert body["failure_reason"] == ""
    page = signed_in(personas, "participant_a").get(f"/runs/{toy_ac_run.pk}/").content.decode()
    assert "failure-reason" not in page
