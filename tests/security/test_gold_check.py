"""A gold-check track (answer_check: gold|both) needs a gold answer for every question.

`load_campaign` refuses a file without them, naming each question, all problems at
once and nothing changed; `grade` never ends in a traceback for a state loading allowed
(a reload keeps questions the file dropped, without their gold answers; the admin edits
tracks): such a run is FAILED at once with a reason naming the questions, no judge call
made, and the command says so per run and exits non-zero.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from campaign.campaign_file import GOLD_ANSWER_MISSING
from campaign.models import Campaign, GoldAnswer, Question, Track
from grading.models import GradingPart, PartStatus
from grading.r2c2.pipeline import GOLD_ANSWERS_MISSING, GoldAnswersMissing
from grading.tasks import grade_part
from grading.work.claims import UNEXPECTED_FAILURE
from submissions.models import Run, RunStatus
from tests.campaign.test_load_campaign import (
    campaign_doc,
    database_state,
    load,
    load_error,
    write_campaign,
)
from tests.grading.rounds import queued_part
from tests.grading.scripted_server import ScriptedServer

pytestmark = pytest.mark.django_db


def gold_tracks(check: str) -> list[dict[str, Any]]:
    return [{"slug": "pr", "kind": "pr"}, {"slug": "ac", "kind": "ac", "answer_check": check}]


class TestLoadingRefusesAGoldCheckWithoutGoldAnswers:
    @pytest.mark.parametrize("check", ["gold", "both"])
    def test_each_question_without_a_gold_answer_is_named(
        self, tmp_path: Path, check: str
    ) -> None:
        path = write_campaign(
            tmp_path, campaign_doc(tracks=gold_tracks(check)),
            questions="D001;Who directed Alien?\nD002;When?\nD003;Where?\n",
            gold="D002;1995\n",
        )

        problems = load_error(path)

        assert problems == [
            GOLD_ANSWER_MISSING.format(file=path, qid=qid, track="ac", check=check,
                                       gold="gold.txt")
            for qid in ("D001", "D003")
        ]
        assert not Campaign.objects.exists()

    def test_a_file_naming_no_gold_answers_says_so(self, tmp_path: Path) -> None:
        doc = {k: v for k, v in campaign_doc(tracks=gold_tracks("gold")).items()
               if k != "gold_answers"}
        path = write_campaign(tmp_path, doc)

        problems = load_error(path)

        assert problems == [
            f"{path}: question {qid} has no gold answer, but track ac checks answers against "
            f"the gold answers (answer_check: gold); expected a '{qid};[answer]' line in "
            "a gold_answers file (the campaign file names none)"
            for qid in ("D001", "D002")
        ]

    def test_it_is_reported_with_the_files_other_problems_at_once(
        self, tmp_path: Path
    ) -> None:
        path = write_campaign(tmp_path, campaign_doc(tracks=gold_tracks("gold"),
                                                     timezone="Nowhere"),
                              gold="D001;Ridley Scott\n")

        problems = load_error(path)

        assert [p.split(": ", 1)[1][:30] for p in problems] == [
            "timezone: 'Nowhere' is not an ",
            "question D002 has no gold answ",
        ]

    def test_a_bad_reload_leaves_the_loaded_campaign_untouched(self, tmp_path: Path) -> None:
        load(write_campaign(tmp_path, campaign_doc(tracks=gold_tracks("gold"))))
        before = database_state()

        problems = load_error(write_campaign(tmp_path, campaign_doc(tracks=gold_tracks("gold")),
                                             gold="D001;Ridley Scott\n"))

        assert len(problems) == 1 and "question D002 has no gold answer" in problems[0]
        assert database_state() == before

    def test_a_nuggets_check_needs_no_gold_answers(self, tmp_path: Path) -> None:
        load(write_campaign(tmp_path, campaign_doc(tracks=gold_tracks("nuggets")), gold=""))

        assert Track.objects.get(slug="ac").answer_check == "nuggets"
        assert not GoldAnswer.objects.exists()


@pytest.fixture
def gold_check_without_d001_and_d003(toy_ac_run: Run) -> Run:
    """The toy AC run (answering D001, D002, D003) on a gold-check track where only D002
    has a gold answer: what a reload or the admin can leave behind."""
    Track.objects.filter(slug="ac").update(answer_check="gold")
    GoldAnswer.objects.create(question=Question.objects.get(qid="D002"), text="Neil Armstrong")
    return toy_ac_run


REASON = GOLD_ANSWERS_MISSING.format(track="ac", check="gold", qids="D001, D003")


class TestGradingAGoldCheckWithoutGoldAnswers:
    def test_the_command_fails_the_run_naming_the_questions_and_exits_non_zero(
        self, gold_check_without_d001_and_d003: Run, server: ScriptedServer,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        run = gold_check_without_d001_and_d003
        monkeypatch.setattr("sys.stderr", io.StringIO())  # no progress bars
        stderr = io.StringIO()

        with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"), \
                pytest.raises(CommandError, match=r"^1 run\(s\) could not be graded: "):
            call_command("grade", "toy", stdout=io.StringIO(), stderr=stderr)

        run.refresh_from_db()
        assert (run.status, run.failure_reason) == (RunStatus.FAILED, REASON)
        assert GradingPart.objects.get(job__run=run).status == PartStatus.FAILED  # not held
        assert stderr.getvalue() == f"WASEDA-AC-1: run marked failed: {REASON}\n"
        assert server.requests == []  # nothing was sent to the judge

    def test_the_task_fails_it_at_once_without_retrying(
        self, gold_check_without_d001_and_d003: Run, server: ScriptedServer,
    ) -> None:
        run = gold_check_without_d001_and_d003
        with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
            result = grade_part.apply(args=(queued_part(run),))

        assert result.state == "FAILURE" and isinstance(result.result, GoldAnswersMissing)
        assert result.result.permanent
        run.refresh_from_db()
        assert (run.status, run.failure_reason) == (RunStatus.FAILED, REASON)
        assert server.requests == []

    def test_given_the_gold_answers_the_run_is_graded(
        self, gold_check_without_d001_and_d003: Run, server: ScriptedServer,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        run = gold_check_without_d001_and_d003
        monkeypatch.setattr("sys.stderr", io.StringIO())
        for qid, text in (("D001", "CNSA"), ("D003", "Mars")):
            GoldAnswer.objects.create(question=Question.objects.get(qid=qid), text=text)

        with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
            call_command("grade", "toy", stdout=io.StringIO(), stderr=io.StringIO())

        run.refresh_from_db()
        assert (run.status, run.failure_reason) == (RunStatus.SCORED, "")


def test_an_unexpected_error_fails_the_run_and_the_command_without_a_traceback(
    toy_ac_run: Run, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("a bug in grading")

    monkeypatch.setattr("grading.r2c2.parts.grade_ac_part", broken)
    stderr = io.StringIO()

    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"), \
            pytest.raises(CommandError, match=r"^1 run\(s\) could not be graded: "):
        call_command("grade", "toy", stdout=io.StringIO(), stderr=stderr)

    toy_ac_run.refresh_from_db()
    reason = UNEXPECTED_FAILURE.format(error="RuntimeError")
    assert (toy_ac_run.status, toy_ac_run.failure_reason) == (RunStatus.FAILED, reason)
    assert stderr.getvalue() == f"WASEDA-AC-1: run marked failed: {reason}\n"
    # The traceback is in the log, for whoever fixes the bug.
    logged = [r for r in caplog.records if r.name == "grading.management.commands.grade"]
    assert logged and logged[0].exc_info is not None
    assert str(logged[0].exc_info[1]) == "a bug in grading"
