"""The review queue through the API: the judge's doubt, sorted and filtered; one-click
confirmation of a label the judge got right."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from grading.models import Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from grading.r2c2.entailment_rule import RULE_PRECISION
from grading.r2c2.pipeline import run_grade
from grading.review.edits import CONFIRM_NOTE, NOTHING_TO_CONFIRM, EditRefused, judgment_confirm
from grading.selectors import marked_run
from submissions.models import Run
from tests.grading.fixtures import (
    FOURTH_PLANET,
    MARS_DIAMETER,
    SOFT_LANDING,
    judgment_of,
)
from tests.grading.scripted_server import SURE, ScriptedJudge
from tests.support import Personas

pytestmark = pytest.mark.django_db

NOT_ORGANISER = ["participant_a", "participant_b", "outsider"]
JUDGMENTS = "/api/v1/campaigns/toy/judgments/"



def confirm(personas: Personas, judgment: Judgment, who: str = "organiser") -> Any:
    return personas.client(who).post(f"/api/v1/judgments/{judgment.pk}/confirm/")


def label_of(item: dict[str, Any]) -> str:
    """An item's place in the run: D003#1 for a nugget, D003 for an answer."""
    return f"{item['qid']}#{item['nugget_num']}" if item["kind"] == "entailment" else item["qid"]


class TestDoubt:
    def test_the_judges_probability_is_stored_with_each_judgment_and_its_steps(
        self, doubted: Run
    ) -> None:
        assert judgment_of(SOFT_LANDING).confidence == pytest.approx(0.6)
        assert judgment_of("Buzz Aldrin").confidence == pytest.approx(0.7)
        assert judgment_of(MARS_DIAMETER).confidence == pytest.approx(0.9)
        # An answer is as sure as its least sure step: here, the relevance of nugget 3.
        mars = judgment_of("Mars")
        assert mars.confidence == pytest.approx(0.75)
        relevance = {step["nugget"]: step for step in mars.steps if step["step"] == "relevance"}
        assert relevance[3]["verdict"] is False and relevance[3]["explained"] is True
        assert relevance[3]["confidence"] == pytest.approx(0.75)
        assert "explained" not in relevance[1]
        assert mars.label == {"correct": True, "relevant": [1, 2]}

    def test_reasons_are_written_where_the_judge_doubts_and_nowhere_else(
        self, doubted: Run
    ) -> None:
        assert judgment_of(SOFT_LANDING).reason == "scripted"
        assert judgment_of("Buzz Aldrin").reason == "scripted"
        assert judgment_of("Mars").nugget_reasons == {"3": "scripted"}
        assert judgment_of("Mars").reason == ""  # its correctness step was sure
        assert judgment_of(MARS_DIAMETER).reason == ""  # 0.9: above the threshold
        assert judgment_of(FOURTH_PLANET).reason == ""


class TestDoubtWithoutLogprobs:
    """A judge server that sends no token logprobs: each verdict is sampled again and
    the share of replies that agree is its confidence, so the queue still has an order."""

    def test_a_verdict_the_judge_flips_when_sampling_is_doubtful(
        self, personas: Personas, toy_ac_run: Run, script: ScriptedJudge,
        judge: OpenAIJudge,
    ) -> None:
        script.logprobs = False
        # The soft landing's greedy verdict (true) is outvoted by both samples: it is the
        # likelier verdict all the same (greedy), so its confidence is an even chance.
        script.sampled[SOFT_LANDING] = [False, False]
        run_grade(run=toy_ac_run, judge=judge)

        landing = judgment_of(SOFT_LANDING)
        assert landing.label == {"entailed": True}  # the greedy reply decides
        assert landing.confidence == pytest.approx(0.5)
        assert landing.steps[0]["confidence_from"] == "samples"
        assert landing.reason == "scripted"  # doubted, so explained
        assert judgment_of(MARS_DIAMETER).confidence == pytest.approx(1.0)
        doubtful = personas.client("organiser").get(f"{JUDGMENTS}?doubtful=1").json()["results"]
        assert [label_of(i) for i in doubtful] == ["D001#1"]


class TestTheQueue:
    def test_items_carry_confidence_doubt_and_steps_beside_the_documented_fields(
        self, personas: Personas, doubted: Run
    ) -> None:
        items = personas.client("organiser").get(f"{JUDGMENTS}?kind=entailment").json()["results"]
        landing = next(i for i in items if label_of(i) == "D001#1")
        assert {"id", "kind", "run", "qid", "nugget_num", "entailed", "reason", "edited",
                "judge", "confidence", "doubtful", "steps"} <= set(landing)
        assert landing["confidence"] == pytest.approx(0.6) and landing["doubtful"] is True
        assert landing["entailed"] is True and landing["reason"] == "scripted"
        [step] = landing["steps"]
        assert (step["step"], step["decided_by"], step["verdict"], step["explained"]) == (
            "entailment", "llm", True, True)
        sure = next(i for i in items if label_of(i) == "D003#1")
        assert (sure["confidence"], sure["doubtful"]) == (pytest.approx(0.9), False)

    def test_ordered_by_doubt_the_least_sure_come_first_and_the_unmeasured_last(
        self, personas: Personas, doubted: Run
    ) -> None:
        # A judgment from a server that gave no token probabilities: nothing measured.
        unmeasured = judgment_of(FOURTH_PLANET)
        Judgment.objects.filter(pk=unmeasured.pk).update(confidence=None)

        items = personas.client("organiser").get(f"{JUDGMENTS}?order=doubt").json()["results"]

        assert [label_of(i) for i in items[:6]] == [
            "D001#1", "D002", "D003", "D003#1", "D001#3", "D002#2"]
        # The two the names-and-numbers rule decided carry its precision.
        assert [i["confidence"] for i in items[:6]] == pytest.approx(
            [0.6, 0.7, 0.75, 0.9, RULE_PRECISION, RULE_PRECISION])
        rest = items[6:-1]
        assert [i["confidence"] for i in rest] == pytest.approx([SURE] * len(rest))
        assert [i["id"] for i in rest] == sorted(i["id"] for i in rest)
        assert (label_of(items[-1]), items[-1]["confidence"]) == ("D003#3", None)
        assert len(items) == 11  # every judgment, only reordered

    def test_without_an_order_the_list_stays_by_run_and_question(
        self, personas: Personas, doubted: Run
    ) -> None:
        items = personas.client("organiser").get(f"{JUDGMENTS}?kind=answer").json()["results"]
        assert [i["qid"] for i in items] == ["D001", "D002", "D003"]

    def test_the_doubtful_filter_keeps_what_the_judge_was_unsure_of(
        self, personas: Personas, doubted: Run
    ) -> None:
        client = personas.client("organiser")
        doubtful = client.get(f"{JUDGMENTS}?doubtful=1&order=doubt").json()["results"]
        assert [label_of(i) for i in doubtful] == ["D001#1", "D002", "D003"]
        assert all(i["doubtful"] for i in doubtful)
        sure = client.get(f"{JUDGMENTS}?doubtful=false").json()["results"]
        assert len(sure) == 8 and not any(i["doubtful"] for i in sure)

    def test_the_threshold_is_the_campaigns(self, personas: Personas, doubted: Run) -> None:
        personas.campaign.review_below = 0.65
        personas.campaign.save()
        doubtful = personas.client("organiser").get(f"{JUDGMENTS}?doubtful=1").json()["results"]
        assert [label_of(i) for i in doubtful] == ["D001#1"]

    def test_an_unknown_order_is_named(self, personas: Personas, doubted: Run) -> None:
        response = personas.client("organiser").get(f"{JUDGMENTS}?order=sure")
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "order", "message": "expected run or doubt, found 'sure'"}]


class TestConfirming:
    def test_a_confirmation_is_an_edit_to_the_same_label_and_leaves_the_queue(
        self, personas: Personas, doubted: Run, judge: OpenAIJudge,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        landing = judgment_of(SOFT_LANDING)
        marked_before = [b.marked for b in marked_run(run=doubted)]

        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = confirm(personas, landing)

        assert response.status_code == 200, response.json()
        body = response.json()
        assert (body["id"], body["label"], body["llm_label"]) == (
            landing.pk, {"entailed": True}, {"entailed": True})
        assert (body["edited"], body["doubtful"], body["reason"]) == (True, True, "scripted")
        assert body["confidence"] == pytest.approx(0.6) and body["steps"] == landing.steps
        edit = JudgmentEdit.objects.get()
        assert (edit.judgment_id, edit.edited_by_id, edit.note) == (
            landing.pk, personas.organiser.pk, CONFIRM_NOTE)
        assert edit.previous_label == edit.new_label == {"entailed": True}
        assert edit.previous_reason == edit.new_reason == "scripted"
        assert len(queued) == 1  # its run is graded and scored again, as after an edit

        left = personas.client("organiser").get(
            f"{JUDGMENTS}?doubtful=1&edited=false").json()["results"]
        assert [label_of(i) for i in left] == ["D002", "D003"]
        # Nothing changes in the marked run: the label stood.
        report = run_grade(run=doubted, judge=judge)
        assert (report.entailment_calls, report.answer_calls) == (0, 0)
        assert [b.marked for b in marked_run(run=doubted)] == marked_before

    @pytest.mark.parametrize(("answer", "label"), [
        ("Buzz Aldrin", {"correct": False, "relevant": []}),
        ("Mars", {"correct": True, "relevant": [1, 2]}),
    ])
    def test_an_answer_is_confirmed_with_its_relevant_nuggets(
        self, personas: Personas, doubted: Run, answer: str, label: dict[str, Any]
    ) -> None:
        body = confirm(personas, judgment_of(answer)).json()
        assert body["label"] == body["llm_label"] == label
        assert JudgmentEdit.objects.get().new_label == label

    def test_a_judgment_without_a_label_cannot_be_confirmed(
        self, personas: Personas, toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge
    ) -> None:
        script.faults[FOURTH_PLANET] = ["garbage", "garbage"]  # never parses: needs review
        run_grade(run=toy_ac_run, judge=judge)
        unlabelled = judgment_of(FOURTH_PLANET)
        assert unlabelled.label is None

        response = confirm(personas, unlabelled)

        assert response.status_code == 400
        assert response.json() == {"detail": NOTHING_TO_CONFIRM,
                                   "errors": [{"field": "label", "message": NOTHING_TO_CONFIRM}]}
        assert not JudgmentEdit.objects.exists()
        unlabelled.refresh_from_db()
        assert not unlabelled.edited

    def test_the_service_refuses_it_too(self, personas: Personas, toy_ac_run: Run,
                                        script: ScriptedJudge, judge: OpenAIJudge) -> None:
        script.faults["Buzz Aldrin"] = ["garbage", "garbage"]
        run_grade(run=toy_ac_run, judge=judge)
        with pytest.raises(EditRefused, match="no label to confirm") as refused:
            judgment_confirm(judgment=judgment_of("Buzz Aldrin"), user=personas.organiser)
        assert refused.value.field == "label"

    @pytest.mark.parametrize("who", [*NOT_ORGANISER, "anonymous"])
    def test_no_one_else_may_confirm(self, personas: Personas, doubted: Run, who: str,
                                     django_capture_on_commit_callbacks: Callable[..., Any],
                                     ) -> None:
        landing = judgment_of(SOFT_LANDING)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = confirm(personas, landing, who)
        # As for an edit (PATCH): 401 without a token; for anyone not organising, the 404
        # of a missing judgment, since they see none.
        assert response.status_code == (401 if who == "anonymous" else 404)
        assert not JudgmentEdit.objects.exists() and queued == []
        landing.refresh_from_db()
        assert not landing.edited

    def test_the_schema_documents_the_queue_and_the_confirmation(self) -> None:
        from rest_framework.test import APIClient

        schema = APIClient().get(
            "/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
        listing = schema["paths"]["/api/v1/campaigns/{slug}/judgments/"]["get"]
        assert {"doubtful", "order"} <= {p["name"] for p in listing["parameters"]}
        item = schema["components"]["schemas"]["JudgmentItem"]["properties"]
        assert item["confidence"]["nullable"] is True and item["doubtful"]["type"] == "boolean"
        assert "post" in schema["paths"]["/api/v1/judgments/{judgment_id}/confirm/"]
