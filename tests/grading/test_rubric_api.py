"""Rubric judgments through the API: the list's shape, filters,
and post-edits of a grade, for organisers only, audited, read by scoring."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from campaign.models import TestBankItem
from grading.models import Judgment, JudgmentEdit, JudgmentKind, JudgmentStatus
from grading.openai_judge import OpenAIJudge
from grading.rubric.grades import rubric_grade
from grading.selectors import rubric_grades
from tests.grading.fixtures import make_judge
from tests.grading.rubric_support import (
    ALIEN,
    BLADE,
    PASSAGES,
    TOY,
    ScriptedRubric,
    make_bank,
    rubric_track,
)
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas

pytestmark = pytest.mark.django_db

LIST = "/api/v1/campaigns/toy/judgments/"
DETAIL = "/api/v1/judgments/{id}/"
DIRECTOR = "Who directed Alien?"
CGI = "Toy Story was the first computer-animated feature."


@pytest.fixture
def rubric() -> ScriptedRubric:
    return ScriptedRubric(grades={(ALIEN, DIRECTOR): (5, "Ridley Scott"),
                                  (BLADE, DIRECTOR): (3, "Ridley Scott")},
                          garbage={(TOY, CGI)})


@pytest.fixture
def rubric_judge(rubric: ScriptedRubric) -> Iterator[OpenAIJudge]:
    with ScriptedServer(rubric) as running:
        yield make_judge(running)


@pytest.fixture
def bank(personas: Personas, rubric_judge: OpenAIJudge) -> dict[str, TestBankItem]:
    """The bank, graded on PASSAGES, with the key check (key_match in the labels)."""
    rubric_track(personas, answer_check="key")
    items = make_bank(personas)
    rubric_grade(campaign=personas.campaign, passages=PASSAGES, judge=rubric_judge)
    return items


def rubric_judgment(passage: str, item: str) -> Judgment:
    return Judgment.objects.get(kind=JudgmentKind.RUBRIC, input__passage=passage,
                                input__item=item)


class TestList:
    def test_rubric_items_have_the_documented_fields(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        response = personas.client("organiser").get(LIST, {"kind": "rubric"})

        assert response.status_code == 200, response.json()
        body = response.json()
        assert body["count"] == 7
        first = body["results"][0]
        assert {"id", "kind", "run", "qid", "docid", "item_id", "grade", "answer", "reason",
                "edited", "judge"} <= set(first)
        assert "nugget_num" not in first
        assert (first["id"], first["kind"], first["run"], first["qid"], first["docid"],
                first["item_id"], first["grade"], first["answer"], first["key_match"],
                first["edited"]) == (
            rubric_judgment(ALIEN, DIRECTOR).pk, "rubric", None, "D001", "d1",
            bank["director"].item_id, 5, "Ridley Scott", True, False)
        assert first["judge"] == {"model": "scripted-judge", "prompt_version": "rubric-v1"}
        # By query, passage and item.
        assert [(i["qid"], i["docid"]) for i in body["results"]] == [
            ("D001", "d1"), ("D001", "d1"), ("D001", "d3"), ("D001", "d3"), ("D001", "d4"),
            ("D001", "d4"), ("D002", "d2")]

    def test_a_reply_that_never_parsed_lists_as_grade_1_needing_review(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        items = personas.client("organiser").get(
            LIST, {"kind": "rubric", "needs_review": "true"}).json()["results"]

        assert [(i["qid"], i["docid"], i["grade"], i["answer"], i["needs_review"])
                for i in items] == [("D002", "d2", 1, "", True)]

    def test_filters_by_grade_and_query(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        client = personas.client("organiser")
        fives = client.get(LIST, {"kind": "rubric", "grade": "5"}).json()["results"]
        assert [(i["docid"], i["item_id"]) for i in fives] == [("d1", bank["director"].item_id)]
        assert client.get(LIST, {"qid": "D002"}).json()["count"] == 1
        refused = client.get(LIST, {"grade": 6})
        assert refused.status_code == 400
        assert [e["field"] for e in refused.json()["errors"]] == ["grade"]

    def test_a_run_filter_lists_no_rubric_item_until_runs_retrieve_passages(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        # A grade belongs to a passage; ?run= lists those of the passages a run
        # retrieved. No ranking run is stored yet, so none has retrieved any.
        response = personas.client("organiser").get(LIST, {"kind": "rubric",
                                                           "run": "WASEDA-dl-1"})
        assert (response.status_code, response.json()["count"]) == (200, 0)

    def test_an_unknown_kind_is_named_with_the_three_kinds(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        response = personas.client("organiser").get(LIST, {"kind": "exam"})
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "kind", "message": "expected entailment, answer or rubric, found 'exam'"}]

    @pytest.mark.parametrize("who", ["participant_a", "participant_b", "outsider"])
    def test_no_one_else_sees_rubric_judgments(
        self, personas: Personas, bank: dict[str, TestBankItem], who: str
    ) -> None:
        response = personas.client(who).get(LIST, {"kind": "rubric"})
        assert response.status_code == 404  # as if the campaign did not exist
        assert "results" not in response.json()
        assert personas.client("anonymous").get(LIST).status_code == 401


class TestPostEdit:
    def test_an_organiser_edits_a_grade_and_scoring_reads_it(
        self, personas: Personas, bank: dict[str, TestBankItem],
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        judgment = rubric_judgment(BLADE, DIRECTOR)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client("organiser").patch(
                DETAIL.format(id=judgment.pk), {"grade": 4, "note": "it names him"},
                format="json")

        assert response.status_code == 200, response.json()
        body = response.json()
        assert (body["label"], body["llm_label"], body["edited"], body["status"]) == (
            {"grade": 4, "answer": "Ridley Scott", "key_match": True},
            {"grade": 3, "answer": "Ridley Scott", "key_match": True}, True, "reviewed")
        edit = JudgmentEdit.objects.get(judgment=judgment)
        assert (edit.edited_by, edit.note, edit.previous_label, edit.new_label) == (
            personas.organiser, "it names him", body["llm_label"], body["label"])
        grades = rubric_grades(campaign=personas.campaign, qids=["D001"])
        assert grades["D001"]["d3"][bank["director"].item_id] == 4
        assert len(queued) == 1  # scoring, so no leaderboard stays older than the edit

    def test_an_edit_gives_a_grade_to_a_reply_that_never_parsed(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        judgment = rubric_judgment(TOY, CGI)
        response = personas.client("organiser").patch(
            DETAIL.format(id=judgment.pk),
            {"grade": 5, "answer": "first fully computer-animated feature",
             "note": "read it myself"}, format="json")

        assert response.status_code == 200, response.json()
        judgment.refresh_from_db()
        assert (judgment.label, judgment.status) == (
            {"grade": 5, "answer": "first fully computer-animated feature"},
            JudgmentStatus.REVIEWED)
        assert rubric_grades(campaign=personas.campaign)["D002"]["d2"] == {
            bank["cgi"].item_id: 5}

    def test_a_confirmed_grade_reads_reviewed_and_keeps_its_label(
        self, personas: Personas, bank: dict[str, TestBankItem]
    ) -> None:
        judgment = rubric_judgment(ALIEN, DIRECTOR)
        response = personas.client("organiser").post(f"{DETAIL.format(id=judgment.pk)}confirm/")

        assert response.status_code == 200, response.json()
        judgment.refresh_from_db()
        assert (judgment.status, judgment.label, judgment.edits.count()) == (
            JudgmentStatus.REVIEWED, {"grade": 5, "answer": "Ridley Scott", "key_match": True},
            1)

    @pytest.mark.parametrize(("body", "field"), [
        ({"grade": 6, "note": "n"}, "grade"),
        ({"grade": -1, "note": "n"}, "grade"),
        ({"grade": "four", "note": "n"}, "grade"),
        ({"grade": 4}, "note"),
        ({"grade": 4, "note": "  "}, "note"),
        ({"entailed": True, "note": "n"}, "grade"),
        ({"grade": 4, "correct": True, "note": "n"}, "grade"),
    ])
    def test_a_bad_edit_is_refused_with_the_field_named(
        self, personas: Personas, bank: dict[str, TestBankItem], body: dict[str, Any],
        field: str,
    ) -> None:
        judgment = rubric_judgment(ALIEN, DIRECTOR)
        response = personas.client("organiser").patch(DETAIL.format(id=judgment.pk), body,
                                                      format="json")

        assert response.status_code == 400
        assert field in {e["field"] for e in response.json()["errors"]}
        assert not JudgmentEdit.objects.exists()

    @pytest.mark.parametrize("who", ["participant_a", "outsider", "anonymous"])
    def test_no_one_else_may_edit_a_grade(
        self, personas: Personas, bank: dict[str, TestBankItem], who: str
    ) -> None:
        judgment = rubric_judgment(ALIEN, DIRECTOR)
        response = personas.client(who).patch(DETAIL.format(id=judgment.pk),
                                              {"grade": 0, "note": "n"}, format="json")

        assert response.status_code == (401 if who == "anonymous" else 404)
        judgment.refresh_from_db()
        assert (judgment.edited, judgment.label) == (
            False, {"grade": 5, "answer": "Ridley Scott", "key_match": True})
        assert not JudgmentEdit.objects.exists()
