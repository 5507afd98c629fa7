"""RUBRIC grading (docs/rubric.md): per (passage, item) self-ratings, cached by
input across runs, stale when an item is edited, with the EXAM++ rules and answer checks.

Judge calls are counted at the scripted server: what a campaign pays for is requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from campaign import testbank
from campaign.models import TestBankItem
from campaign.testbank import ItemChange
from grading.llm.prompts import RUBRIC_PROMPT_VERSION
from grading.llm.rubric import UNPARSED_GRADE
from grading.llm.schemas import ANSWER_KEY_SCHEMA_NAME, RUBRIC_SCHEMA_NAME
from grading.models import Judgment, JudgmentKind, JudgmentStatus, PassageItemGrade
from grading.openai_judge import OpenAIJudge
from grading.rubric.grades import rubric_grade
from grading.selectors import rubric_grades
from tests.grading.fixtures import make_judge
from tests.grading.rubric_support import (
    ALIEN,
    BLADE,
    PASSAGES,
    SHARK,
    TOY,
    ScriptedRubric,
    make_bank,
    rubric_track,
)
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas

pytestmark = pytest.mark.django_db

DIRECTOR, YEAR = "Who directed Alien?", "When was Alien released?"
CGI = "Toy Story was the first computer-animated feature."


@pytest.fixture
def rubric() -> ScriptedRubric:
    return ScriptedRubric(grades={
        (ALIEN, DIRECTOR): (5, "Ridley Scott"), (ALIEN, YEAR): (5, "1979"),
        (BLADE, DIRECTOR): (3, "Ridley Scott"), (BLADE, YEAR): (0, "unanswerable"),
        (SHARK, DIRECTOR): (1, "Steven Spielberg"), (SHARK, YEAR): (0, "no answer"),
        (TOY, CGI): (4, "the first feature made entirely with computer animation"),
    })


@pytest.fixture
def rubric_server(rubric: ScriptedRubric) -> Iterator[ScriptedServer[ScriptedRubric]]:
    with ScriptedServer(rubric) as running:
        yield running


@pytest.fixture
def rubric_judge(rubric_server: ScriptedServer[ScriptedRubric]) -> OpenAIJudge:
    return make_judge(rubric_server)


@pytest.fixture
def bank(personas: Personas) -> dict[str, TestBankItem]:
    rubric_track(personas)
    return make_bank(personas)


def grades_of(personas: Personas) -> dict[str, dict[str, dict[str, int]]]:
    return rubric_grades(campaign=personas.campaign)


class TestCaching:
    def test_a_passage_retrieved_by_ten_runs_is_graded_once_per_item(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        report = rubric_grade(campaign=personas.campaign, passages=PASSAGES * 10,
                              judge=rubric_judge)

        # D001: 3 passages x 2 items; D002: 1 passage x 1 item; D003 has no items.
        assert rubric.count(RUBRIC_SCHEMA_NAME) == 7
        assert (report.passages, report.pairs, report.judged, report.without_items) == (
            5, 7, 7, ["D003"])
        director, year, cgi = (bank[k].item_id for k in ("director", "year", "cgi"))
        assert grades_of(personas) == {
            "D001": {"d1": {director: 5, year: 5}, "d3": {director: 3, year: 0},
                     "d4": {director: 1, year: 0}},
            "D002": {"d2": {cgi: 4}},
        }

    def test_grading_again_costs_no_call_and_keeps_one_link_per_pair(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        rubric_grade(campaign=personas.campaign, passages=PASSAGES, judge=rubric_judge)
        report = rubric_grade(campaign=personas.campaign, passages=PASSAGES[:2],
                              judge=rubric_judge)

        assert rubric.count(RUBRIC_SCHEMA_NAME) == 7
        assert (report.pairs, report.judged) == (4, 0)
        assert PassageItemGrade.objects.count() == 7
        assert Judgment.objects.filter(kind=JudgmentKind.RUBRIC).count() == 7

    def test_the_same_passage_text_under_two_docids_is_judged_once(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        # A response run's segment may repeat a corpus passage word for word.
        rubric_grade(campaign=personas.campaign, judge=rubric_judge,
                     passages=[("D002", "d2", TOY), ("D002", "GEN-1:D002:1", TOY)])

        assert rubric.count(RUBRIC_SCHEMA_NAME) == 1
        assert grades_of(personas)["D002"] == {"d2": {bank["cgi"].item_id: 4},
                                               "GEN-1:D002:1": {bank["cgi"].item_id: 4}}

    def test_two_texts_for_one_passage_are_refused_before_any_call(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        with pytest.raises(ValueError, match="passage d1 of query D001 is given with two"):
            rubric_grade(campaign=personas.campaign, judge=rubric_judge,
                         passages=[("D001", "d1", ALIEN), ("D001", "d1", BLADE)])
        assert rubric.count(RUBRIC_SCHEMA_NAME) == 0

    def test_judgments_carry_their_provenance(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric_judge: OpenAIJudge,
    ) -> None:
        rubric_grade(campaign=personas.campaign, passages=PASSAGES[:1], judge=rubric_judge)

        judgment = Judgment.objects.get(kind=JudgmentKind.RUBRIC, input__item=DIRECTOR)
        assert (judgment.judge_model, judgment.prompt_version, judgment.status) == (
            "scripted-judge", RUBRIC_PROMPT_VERSION, JudgmentStatus.DONE)
        assert judgment.llm_label == {"grade": 5, "answer": "Ridley Scott"}
        assert judgment.input["passage"] == ALIEN
        assert judgment.input["item_text_hash"] == bank["director"].text_hash
        assert len(judgment.input_hash) == 64
        assert judgment.raw_output == '{"grade": 5, "answer": "Ridley Scott"}'
        assert judgment.prompt_tokens and judgment.completion_tokens
        assert judgment.decoding == {"temperature": 0.0, "max_tokens": 1024, "seed": 0}
        assert judgment.steps[0]["self_rated"] == 5


class TestStaleness:
    def test_editing_an_item_regrades_only_that_items_pairs(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        rubric_grade(campaign=personas.campaign, passages=PASSAGES, judge=rubric_judge)
        edited = "In which year was Alien first released?"
        testbank.testbank_edit(item=bank["year"], user=personas.organiser,  # type: ignore[arg-type]
                      change=ItemChange(text=edited), note="say 'first'")
        year = bank["year"].item_id

        # Stale until graded again: the grades of the old text are not read.
        assert all(year not in by_item for by_item in grades_of(personas)["D001"].values())

        rubric.grades[(ALIEN, edited)] = (4, "1979")
        report = rubric_grade(campaign=personas.campaign, passages=PASSAGES,
                              judge=rubric_judge)

        assert (report.judged, rubric.count(RUBRIC_SCHEMA_NAME)) == (3, 7 + 3)
        assert grades_of(personas)["D001"]["d1"] == {bank["director"].item_id: 5, year: 4}

    def test_a_retired_item_is_neither_graded_nor_read(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        rubric_grade(campaign=personas.campaign, passages=PASSAGES, judge=rubric_judge)
        testbank.testbank_retire(item=bank["cgi"], user=None, note="too vague")

        report = rubric_grade(campaign=personas.campaign, passages=PASSAGES,
                              judge=rubric_judge)

        assert "D002" not in grades_of(personas)
        assert report.without_items == ["D002", "D003"]


class TestGradingRules:
    def test_a_reply_that_never_parses_counts_1_and_needs_review(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge,
    ) -> None:
        rubric.garbage.add((TOY, CGI))

        report = rubric_grade(campaign=personas.campaign, passages=[("D002", "d2", TOY)],
                              judge=rubric_judge)

        # make_judge asks twice (parse_attempts=2) before it gives up on a reply.
        assert rubric.count(RUBRIC_SCHEMA_NAME) == 2
        judgment = Judgment.objects.get(kind=JudgmentKind.RUBRIC)
        assert (judgment.status, judgment.llm_label, report.needs_review) == (
            JudgmentStatus.NEEDS_REVIEW, None, 1)
        assert judgment.raw_output == "this is not JSON {"
        assert grades_of(personas) == {"D002": {"d2": {bank["cgi"].item_id: UNPARSED_GRADE}}}
        assert UNPARSED_GRADE == 1

    @pytest.mark.parametrize("answer", ["unanswerable", "Not enough information.",
                                        "It does not say", ""])
    def test_an_answer_that_says_there_is_none_makes_the_grade_0(
        self, personas: Personas, bank: dict[str, TestBankItem], rubric: ScriptedRubric,
        rubric_judge: OpenAIJudge, answer: str,
    ) -> None:
        rubric.grades[(TOY, CGI)] = (4, answer)

        rubric_grade(campaign=personas.campaign, passages=[("D002", "d2", TOY)],
                     judge=rubric_judge)

        judgment = Judgment.objects.get(kind=JudgmentKind.RUBRIC)
        assert judgment.llm_label == {"grade": 0, "answer": answer.strip()}
        assert judgment.steps[0]["self_rated"] == 4
        assert grades_of(personas)["D002"]["d2"] == {bank["cgi"].item_id: 0}


class TestAnswerChecks:
    def test_key_check_matches_by_edit_distance_without_a_call(
        self, personas: Personas, rubric: ScriptedRubric, rubric_judge: OpenAIJudge,
    ) -> None:
        rubric_track(personas, answer_check="key")
        make_bank(personas)
        rubric.grades[(BLADE, DIRECTOR)] = (3, "Sir Ridley Scott")

        rubric_grade(campaign=personas.campaign, passages=PASSAGES[:3], judge=rubric_judge)

        assert (rubric.count(RUBRIC_SCHEMA_NAME), rubric.count(ANSWER_KEY_SCHEMA_NAME)) == (6, 0)
        labels: dict[tuple[str, str], Any] = {
            (j.input["passage"], j.input["item"]): j.llm_label
            for j in Judgment.objects.filter(kind=JudgmentKind.RUBRIC)}
        assert labels[(ALIEN, DIRECTOR)] == {"grade": 5, "answer": "Ridley Scott",
                                             "key_match": True}
        # "sir ridley scott" vs "ridley scott": 4 edits of 16 characters, 25% >= 20%.
        assert labels[(BLADE, DIRECTOR)]["key_match"] is False
        assert labels[(SHARK, DIRECTOR)]["key_match"] is False
        assert labels[(BLADE, YEAR)] == {"grade": 0, "answer": "unanswerable",
                                         "key_match": False}

    def test_llm_check_asks_the_judge_for_answers_it_extracted(
        self, personas: Personas, rubric: ScriptedRubric, rubric_judge: OpenAIJudge,
    ) -> None:
        rubric_track(personas, answer_check="llm")
        make_bank(personas)
        rubric.key_matches = {"Ridley Scott": True, "1979": True}
        rubric.key_sure = 0.7

        rubric_grade(campaign=personas.campaign, passages=PASSAGES[:3], judge=rubric_judge)

        # Six self-ratings; four answers extracted (two said "none": no key call there).
        assert (rubric.count(RUBRIC_SCHEMA_NAME), rubric.count(ANSWER_KEY_SCHEMA_NAME)) == (6, 4)
        judgments = {(j.input["passage"], j.input["item"]): j
                     for j in Judgment.objects.filter(kind=JudgmentKind.RUBRIC)}
        alien = judgments[(ALIEN, DIRECTOR)]
        assert alien.llm_label == {"grade": 5, "answer": "Ridley Scott", "key_match": True}
        assert alien.confidence == pytest.approx(0.7)
        assert [s["step"] for s in alien.steps] == ["rubric", "answer-key"]
        assert judgments[(SHARK, DIRECTOR)].label == {"grade": 1, "answer": "Steven Spielberg",
                                                      "key_match": False}
        assert judgments[(SHARK, YEAR)].label == {"grade": 0, "answer": "no answer",
                                                  "key_match": False}

    def test_changing_a_key_regrades_under_a_key_check_only(
        self, personas: Personas, rubric: ScriptedRubric, rubric_judge: OpenAIJudge,
    ) -> None:
        track = rubric_track(personas, answer_check="none")
        bank = make_bank(personas)
        rubric_grade(campaign=personas.campaign, passages=PASSAGES[:1], judge=rubric_judge)
        testbank.testbank_edit(item=bank["director"], user=None,
                      change=ItemChange(answers=["R. Scott"]), note="initial")
        rubric_grade(campaign=personas.campaign, passages=PASSAGES[:1], judge=rubric_judge)
        assert rubric.count(RUBRIC_SCHEMA_NAME) == 2

        track.answer_check = "key"
        track.save()
        rubric_grade(campaign=personas.campaign, passages=PASSAGES[:1], judge=rubric_judge)
        assert rubric.count(RUBRIC_SCHEMA_NAME) == 4
