"""Grading and judgments through the API: organisers only; post-edits with an audit trail."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from campaign.api import CAMPAIGN_NOT_FOUND
from grading.models import Judgment, JudgmentEdit, JudgmentStatus
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from grading.selectors import marked_run
from grading.work.rounds import campaign_grading_queue
from submissions.models import Run
from tests.grading.scripted_server import ScriptedJudge
from tests.support import Personas

pytestmark = pytest.mark.django_db

NOT_ORGANISER = ["participant_a", "participant_b", "outsider"]
ESA_LAUNCH = "Chang'e 4 was launched by the European Space Agency."  # D001 nugget 3, B
SOFT_LANDING = "Chang'e 4 made the first soft landing on the far side of the Moon."  # D001#1, R
MARS_DIAMETER = "Mars has a mean diameter of about 6,779 km."  # D003 nugget 1, R


@pytest.fixture
def graded(toy_ac_run: Run, judge: OpenAIJudge) -> Run:
    run_grade(run=toy_ac_run, judge=judge)
    return toy_ac_run


def judgment_of(kind: str, **match: Any) -> Judgment:
    field = {"entailment": "input__nugget", "answer": "input__answer"}[kind]
    return Judgment.objects.get(kind=kind, **{field: match["text"]})


def marks(run: Run) -> dict[str, str]:
    return {f"{b.marked.qid}#{m.nugget.nugget_num}": m.mark
            for b in marked_run(run=run) for m in b.marked.nuggets}


class TestJudgmentsList:
    def test_organisers_list_judgments_with_the_documented_fields(
        self, personas: Personas, graded: Run
    ) -> None:
        response = personas.client("organiser").get(
            "/api/v1/campaigns/toy/judgments/?run=WASEDA-AC-1&kind=entailment")
        assert response.status_code == 200
        items = response.json()["results"]
        assert len(items) == 8
        first = items[0]
        assert {"id", "kind", "run", "qid", "nugget_num", "entailed", "reason", "edited",
                "judge"} <= set(first)
        assert (first["run"], first["qid"], first["nugget_num"]) == ("WASEDA-AC-1", "D001", 1)
        bogus = [i for i in items if i["entailed"] is False]
        assert [(i["qid"], i["nugget_num"]) for i in bogus] == [("D001", 3), ("D002", 2)]

    def test_answers_list_their_verdict_and_relevant_nuggets(
        self, personas: Personas, graded: Run
    ) -> None:
        items = personas.client("organiser").get(
            "/api/v1/campaigns/toy/judgments/?kind=answer").json()["results"]
        assert {(i["qid"], i["correct"], tuple(i["relevant"])) for i in items} == {
            ("D001", True, (1, 2)), ("D002", False, ()), ("D003", True, (1, 2))}

    def test_filters_by_label(self, personas: Personas, graded: Run) -> None:
        items = personas.client("organiser").get(
            "/api/v1/campaigns/toy/judgments/?kind=answer&label=false").json()["results"]
        assert [i["qid"] for i in items] == ["D002"]

    @pytest.mark.parametrize("who", NOT_ORGANISER)
    def test_no_one_else_sees_judgments(self, personas: Personas, graded: Run,
                                        who: str) -> None:
        # As if the campaign did not exist (docs/access.md: 404, never 403).
        response = personas.client(who).get("/api/v1/campaigns/toy/judgments/")
        assert response.status_code == 404
        assert response.json()["detail"] == CAMPAIGN_NOT_FOUND

    def test_an_unknown_kind_is_named(self, personas: Personas, graded: Run) -> None:
        response = personas.client("organiser").get("/api/v1/campaigns/toy/judgments/?kind=x")
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "kind", "message": "expected entailment, answer or rubric, found 'x'"}]


class TestPostEditing:
    def test_an_edit_wins_keeps_the_audit_trail_and_changes_the_marked_run(
        self, personas: Personas, graded: Run, judge: OpenAIJudge,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        bogus = judgment_of("entailment", text=ESA_LAUNCH)
        assert marks(graded)["D001#3"] == "B"

        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client("organiser").patch(
                f"/api/v1/judgments/{bogus.pk}/",
                {"entailed": True, "reason": "accepted on appeal",
                 "note": "the team showed another source"}, format="json")

        assert response.status_code == 200, response.json()
        body = response.json()
        assert body["label"] == {"entailed": True} and body["llm_label"] == {"entailed": False}
        assert body["edited"] is True
        [edit] = body["history"]
        assert (edit["edited_by"], edit["note"]) == ("olga", "the team showed another source")
        assert edit["previous_label"] == {"entailed": False}
        assert len(queued) == 1  # the run is queued for grading again

        # Re-grading shows nugget 3 to the answer step: it becomes N (not relevant).
        report = run_grade(run=graded, judge=judge)
        assert (report.entailment_calls, report.answer_calls) == (0, 1)
        assert marks(graded)["D001#3"] == "N"

    def test_an_answer_edit_makes_its_nuggets_relevant(
        self, personas: Personas, graded: Run
    ) -> None:
        d002 = judgment_of("answer", text="Buzz Aldrin")
        response = personas.client("organiser").patch(
            f"/api/v1/judgments/{d002.pk}/",
            {"correct": True, "relevant": [1], "note": "he walked on the Moon too"},
            format="json")
        assert response.status_code == 200
        assert marks(graded)["D002#1"] == "R"
        assert {b.marked.qid: b.correct for b in marked_run(run=graded)}["D002"] is True
        assert JudgmentEdit.objects.get().new_label == {"correct": True, "relevant": [1]}

    def test_an_edited_judgment_that_needed_review_no_longer_reads_needs_review(
        self, personas: Personas, toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge,
    ) -> None:
        script.faults[SOFT_LANDING] = ["garbage", "garbage"]  # never parses: needs review
        run_grade(run=toy_ac_run, judge=judge)
        unlabelled = judgment_of("entailment", text=SOFT_LANDING)
        client = personas.client("organiser")
        url = f"/api/v1/judgments/{unlabelled.pk}/"
        assert client.get(url).json()["status"] == JudgmentStatus.NEEDS_REVIEW

        response = client.patch(url, {"entailed": True, "note": "the passage says so"},
                                format="json")

        assert response.status_code == 200, response.json()
        assert response.json()["status"] == JudgmentStatus.REVIEWED == "reviewed"
        assert client.get(url).json()["status"] == "reviewed"
        unlabelled.refresh_from_db()
        assert unlabelled.status == JudgmentStatus.REVIEWED

    def test_a_confirmed_judgment_reads_reviewed(self, personas: Personas, graded: Run) -> None:
        judgment = judgment_of("entailment", text=MARS_DIAMETER)
        assert judgment.status == JudgmentStatus.DONE
        client = personas.client("organiser")

        response = client.post(f"/api/v1/judgments/{judgment.pk}/confirm/")

        assert response.status_code == 200 and response.json()["status"] == "reviewed"

    @pytest.mark.parametrize(
        ("kind", "text", "payload", "field", "message"),
        [
            ("entailment", MARS_DIAMETER, {"entailed": True},
             "note", "This field is required."),
            ("entailment", MARS_DIAMETER,
             {"correct": True, "note": "n"}, "entailed",
             "this entailment judgment takes {\"entailed\": true|false}; found {'correct': True}"),
            ("answer", "Buzz Aldrin", {"correct": True, "relevant": [7], "note": "n"},
             "relevant", "relevant must list NuggetNums shown to the judge ([1]); found [7]"),
            ("answer", "Buzz Aldrin", {"correct": False, "relevant": [1], "note": "n"},
             "relevant", "relevant nuggets are only possible when the answer is correct"),
        ],
        ids=["no note", "wrong fields", "unknown nugget", "relevant but incorrect"],
    )
    def test_a_bad_edit_is_refused_with_the_field_named(
        self, personas: Personas, graded: Run, kind: str, text: str,
        payload: dict[str, Any], field: str, message: str,
    ) -> None:
        judgment = judgment_of(kind, text=text)
        response = personas.client("organiser").patch(
            f"/api/v1/judgments/{judgment.pk}/", payload, format="json")
        assert response.status_code == 400
        assert {"field": field, "message": message} in response.json()["errors"]
        assert not JudgmentEdit.objects.exists()

    @pytest.mark.parametrize("who", [*NOT_ORGANISER, "anonymous"])
    def test_no_one_else_may_edit(self, personas: Personas, graded: Run, who: str) -> None:
        judgment = Judgment.objects.first()
        assert judgment is not None
        response = personas.client(who).patch(
            f"/api/v1/judgments/{judgment.pk}/", {"entailed": True, "note": "n"}, format="json")
        # No one else sees a judgment, so none exists for them.
        assert response.status_code == (401 if who == "anonymous" else 404)
        assert not JudgmentEdit.objects.exists()


class TestGradingEndpoint:
    def test_organisers_queue_pending_runs_and_see_progress(
        self, personas: Personas, toy_ac_run: Run,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        client = personas.client("organiser")
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = client.post("/api/v1/campaigns/toy/grading/")
        assert response.status_code == 202
        body = response.json()
        assert (body["detail"], body["runs"]) == ("1 run(s) queued for grading", ["WASEDA-AC-1"])
        assert len(body["tasks"]) == 1
        assert len(queued) == 1
        progress = client.get("/api/v1/campaigns/toy/grading/").json()
        assert (progress["done"], progress["total"]) == (0, 11)
        assert progress["runs"][0]["entailments"] == {"done": 0, "total": 8}

    @pytest.mark.parametrize("who", NOT_ORGANISER)
    def test_no_one_else_may_start_grading(
        self, personas: Personas, toy_ac_run: Run, who: str,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        status = toy_ac_run.status
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client(who).post("/api/v1/campaigns/toy/grading/")
        assert response.status_code == 403
        assert response.json()["detail"] == "only the organisers of toy may do this"
        assert queued == []  # no grading task is sent
        toy_ac_run.refresh_from_db()
        assert toy_ac_run.status == status
        assert campaign_grading_queue(campaign=personas.campaign) == [toy_ac_run.pk]


def test_the_marked_run_downloads_for_organisers_only(personas: Personas, graded: Run) -> None:
    from tests.support import example

    response = personas.client("organiser").get(f"/api/v1/runs/{graded.pk}/marked/")
    assert response.status_code == 200
    assert response.content == example("WASEDA-AC-1.marked")
    # The team's own only once its track is published (tests/security/test_marked_runs.py).
    assert personas.client("participant_a").get(
        f"/api/v1/runs/{graded.pk}/marked/").status_code == 404
