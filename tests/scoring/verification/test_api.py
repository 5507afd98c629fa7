"""The verification analyses of a ranking track as JSON (docs/rubric.md): the grid,
verify grading, and the manual-qrels lists (missing from the test bank, spurious items).
They show the secret test bank, so everyone but the campaign's organisers gets the
test-bank API's 404, whether or not the campaign or track exists.

On tests/scoring/rubric_case.py's hand-sized case: items A, B (D001) and C, E (D002);
track `dl` of depth 3 and min_grade 4, so D001's pool is d1, d2, d3 (WASEDA-R1's top 3)
and d3, d4 (KYOTO-R1's), and d8 (WASEDA-R1's 4th) is graded but not in it. The organiser
pages read the same selectors (tests/frontend/test_rubric_pages.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaign import testbank
from campaign.testbank import ItemChange
from grading.llm.rubric import UNPARSED_GRADE
from grading.models import Judgment
from grading.review.edits import judgment_edit
from scoring.serializers import TRACK_MISSING, TRACK_NOT_RUBRIC, TRACK_UNKNOWN
from scoring.verification.api import (
    GAPS_QID_UNKNOWN,
    NO_MANUAL_QRELS,
    NO_MANUAL_REFERENCE,
    NOT_AN_ITEM,
    QID_MISSING,
    QID_UNKNOWN,
)
from tests.factories import CampaignFactory, TrackFactory
from tests.frontend.test_rubric_pages import MANUAL
from tests.scoring.rubric_case import RubricCase, rubric_case
from tests.support import Personas

pytestmark = pytest.mark.django_db

GRID = "/api/v1/campaigns/{slug}/verification/grid/"
ANSWERS = "/api/v1/campaigns/{slug}/verification/answers/"
GAPS = "/api/v1/campaigns/{slug}/verification/testbank-gaps/"
TESTBANK = "/api/v1/campaigns/{slug}/testbank/"
REFERENCE = "/api/v1/campaigns/toy/reference/"
NON_ORGANISERS = ["participant_a", "participant_b", "outsider", "anonymous"]


@pytest.fixture
def case(personas: Personas) -> RubricCase:
    return rubric_case(personas)


def get(personas: Personas, url: str, who: str = "organiser", slug: str = "toy",
        expect: int = 200, **query: str) -> Any:
    response = personas.client(who).get(url.format(slug=slug), query)
    assert response.status_code == expect, response.content.decode()[:2000]
    return response.json()


def by_docid(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {passage["docid"]: passage for passage in body["passages"]}


def grade_of(passage: dict[str, Any], item_id: str) -> dict[str, Any]:
    (grade,) = [g for g in passage["grades"] if g["item_id"] == item_id]
    return grade


def upload_reference(personas: Personas, **files: str) -> None:
    """Upload through the reference API, as an organiser would (qrels and/or leaderboard)."""
    data: dict[str, Any] = {"track": "dl"}
    for name, content in files.items():
        data[name] = SimpleUploadedFile(f"{name}.txt", content.encode())
    response = personas.client("organiser").post(REFERENCE, data, format="multipart")
    assert response.status_code == 201, response.json()


def manual_qrels_text(qrels: dict[str, dict[str, int]]) -> str:
    return "".join(f"{qid} 0 {docid} {level}\n"
                   for qid, by_docid in qrels.items() for docid, level in by_docid.items())


# --- who may read them --------------------------------------------------------------------


@pytest.mark.parametrize("url", [GRID, ANSWERS, GAPS])
@pytest.mark.parametrize("who", NON_ORGANISERS)
def test_everyone_but_an_organiser_gets_the_test_banks_404_whatever_they_ask(
    personas: Personas, case: RubricCase, url: str, who: str
) -> None:
    hidden = get(personas, url, who, expect=404, track="dl", qid="D001")
    # The same answer for a track or a campaign that does not exist, for a bad query
    # string (no 400 telling what exists), and as the test-bank API gives them.
    assert get(personas, url, who, expect=404, track="nope", qid="D404") == hidden
    assert get(personas, url, who, expect=404, slug="nowhere", track="dl") == hidden
    assert get(personas, TESTBANK, who, expect=404) == hidden
    assert "Who directed Alien?" not in str(hidden) and "dl" not in hidden["detail"]


@pytest.mark.parametrize("url", [GRID, ANSWERS, GAPS])
def test_an_organiser_of_another_campaign_finds_nothing_here(
    personas: Personas, case: RubricCase, url: str
) -> None:
    CampaignFactory.create(slug="other")
    hidden = get(personas, url, slug="nowhere", expect=404, track="dl", qid="D001")
    assert get(personas, url, slug="other", expect=404, track="dl", qid="D001") == hidden
    assert get(personas, TESTBANK, slug="nowhere", expect=404) == hidden


@pytest.mark.parametrize("url", [GRID, ANSWERS])
@pytest.mark.parametrize(("query", "field", "message"), [
    ({"qid": "D001"}, "track", TRACK_MISSING),
    ({"track": "nope", "qid": "D001"}, "track",
     TRACK_UNKNOWN.format(slug="toy", track="nope", tracks="dl")),
    ({"track": "ac", "qid": "D001"}, "track",
     TRACK_NOT_RUBRIC.format(track="ac", slug="toy", kind="ac", tracks="dl")),
    ({"track": "dl"}, "qid", QID_MISSING),
    ({"track": "dl", "qid": ""}, "qid", QID_MISSING),
    ({"track": "dl", "qid": "D404"}, "qid", QID_UNKNOWN.format(slug="toy", qid="D404")),
    ({"track": "dl", "qid": "D001", "item": "D002/nope"}, "item",
     NOT_AN_ITEM.format(item="D002/nope", qid="D001")),
    ({"track": "dl", "qid": "D001", "grade": "9"}, "grade", '"9" is not a valid choice.'),
])
def test_an_organiser_is_told_which_parameter_is_wrong(
    personas: Personas, case: RubricCase, url: str, query: dict[str, str], field: str,
    message: str
) -> None:
    TrackFactory.create(campaign=personas.campaign, slug="ac", kind="ac")
    body = get(personas, url, expect=400, **query)
    assert body["errors"] == [{"field": field, "message": message}]
    assert body["detail"] == message


# --- the grid -----------------------------------------------------------------------------


def test_the_grid_gives_each_pooled_passage_its_grade_and_answer_on_each_item(
    personas: Personas, case: RubricCase
) -> None:
    body = get(personas, GRID, track="dl", qid="D001")
    a, b = case.item_id("A"), case.item_id("B")
    assert (body["track"], body["qid"], body["min_grade"]) == ("dl", "D001", 4)
    assert [(i["id"], i["item_id"], i["text"], i["status"]) for i in body["items"]] == [
        (case.items["A"].pk, a, "Who directed Alien?", "active"),
        (case.items["B"].pk, b, "When was Alien released?", "active")]
    passages = by_docid(body)
    assert list(passages) == ["d1", "d2", "d3", "d4"]  # d8 lies below depth 3
    assert passages["d1"]["grades"] == [
        {"item_id": a, "grade": 5, "answer": "d1 on A",
         "judgment": case.judgments["d1", "A"].pk, "needs_review": False, "edited": False},
        {"item_id": b, "grade": 2, "answer": "d1 on B",
         "judgment": case.judgments["d1", "B"].pk, "needs_review": False, "edited": False}]
    assert passages["d3"]["retrieved_by"] == [{"run": "KYOTO-R1", "rank": 1},
                                              {"run": "WASEDA-R1", "rank": 3}]
    assert grade_of(passages["d3"], b)["grade"] == 4


def test_a_grade_not_on_the_items_current_text_is_null(personas: Personas,
                                                       case: RubricCase) -> None:
    testbank.testbank_edit(item=case.items["B"], user=None, change=ItemChange(text="Alien's year?"),
                  note="reworded")
    passages = by_docid(get(personas, GRID, track="dl", qid="D001"))
    assert grade_of(passages["d1"], case.item_id("B")) == {
        "item_id": case.item_id("B"), "grade": None, "answer": None, "judgment": None,
        "needs_review": False, "edited": False}
    assert grade_of(passages["d1"], case.item_id("A"))["grade"] == 5


def test_the_grid_shows_an_organisers_edit_and_a_reply_that_never_parsed(
    personas: Personas, case: RubricCase
) -> None:
    judgment_edit(judgment=case.judgments["d4", "A"], user=personas.organiser,
                  changes={"grade": 5}, reason="", note="Ridley Scott is named")
    Judgment.objects.filter(pk=case.judgments["d2", "B"].pk).update(llm_label=None)
    passages = by_docid(get(personas, GRID, track="dl", qid="D001"))
    edited = grade_of(passages["d4"], case.item_id("A"))
    assert (edited["grade"], edited["answer"], edited["edited"]) == (5, "d4 on A", True)
    unparsed = grade_of(passages["d2"], case.item_id("B"))
    assert (unparsed["grade"], unparsed["answer"], unparsed["needs_review"]) == (
        UNPARSED_GRADE, "", True)


def test_the_grid_filters_by_item_and_grade(personas: Personas, case: RubricCase) -> None:
    body = get(personas, GRID, track="dl", qid="D001", grade="4")
    assert list(by_docid(body)) == ["d3"]  # B 4 on d3; d8's 5s are not in the pool
    body = get(personas, GRID, track="dl", qid="D001", item=case.item_id("B"))
    assert [item["item_id"] for item in body["items"]] == [case.item_id("B")]
    assert all(len(passage["grades"]) == 1 for passage in body["passages"])
    body = get(personas, GRID, track="dl", qid="D002", grade="")
    assert list(by_docid(body)) == ["d5", "d6", "d7"]


def test_a_query_without_items_has_a_pool_and_no_columns(personas: Personas,
                                                          case: RubricCase) -> None:
    # D003's d9 is in KYOTO-R1's top 3 but no item asks anything of it: never graded.
    body = get(personas, GRID, track="dl", qid="D003")
    assert body["items"] == []
    assert body["passages"] == [{"docid": "d9", "retrieved_by": [{"run": "KYOTO-R1",
                                                                  "rank": 1}],
                                 "grades": []}]


# --- verify grading -----------------------------------------------------------------------


def test_verify_grading_groups_each_items_answers_by_grade(personas: Personas,
                                                          case: RubricCase) -> None:
    # d4's answer to A made d2's, at d2's grade: one answer given by two passages.
    Judgment.objects.filter(pk=case.judgments["d4", "A"].pk).update(
        llm_label={"grade": 1, "answer": "d2 on A"})
    body = get(personas, ANSWERS, track="dl", qid="D001")
    (a, b) = body["items"]
    assert (a["item_id"], a["text"], a["ungraded"]) == (case.item_id("A"),
                                                        "Who directed Alien?", 0)
    assert [(g["grade"], g["passage_count"]) for g in a["grades"]] == [(5, 1), (3, 1), (1, 2)]
    assert a["grades"][2]["answers"] == [{"answer": "d2 on A", "passages": [
        {"docid": "d2", "judgment": case.judgments["d2", "A"].pk},
        {"docid": "d4", "judgment": case.judgments["d4", "A"].pk}]}]
    assert a["grades"][0]["answers"] == [{"answer": "d1 on A", "passages": [
        {"docid": "d1", "judgment": case.judgments["d1", "A"].pk}]}]
    assert [(g["grade"], [x["answer"] for x in g["answers"]]) for g in b["grades"]] == [
        (4, ["d3 on B"]), (2, ["d1 on B"]), (0, ["d2 on B", "d4 on B"])]
    assert "d8 on A" not in str(body)  # below the track's depth


def test_verify_grading_filters_by_item_and_grade_and_counts_the_ungraded(
    personas: Personas, case: RubricCase
) -> None:
    body = get(personas, ANSWERS, track="dl", qid="D001", item=case.item_id("B"), grade="4")
    (b,) = body["items"]
    assert b["item_id"] == case.item_id("B")
    assert b["grades"] == [{"grade": 4, "passage_count": 1, "answers": [
        {"answer": "d3 on B", "passages": [{"docid": "d3",
                                            "judgment": case.judgments["d3", "B"].pk}]}]}]
    testbank.testbank_edit(item=case.items["B"], user=None, change=ItemChange(text="Alien's year?"),
                  note="reworded")
    (b,) = get(personas, ANSWERS, track="dl", qid="D001", item=case.item_id("B"))["items"]
    assert (b["grades"], b["ungraded"]) == ([], 4)


# --- missing from the test bank, spurious items -----------------------------------------------
# MANUAL (tests/frontend/test_rubric_pages.py) against the case's grades, min_grade 4:
# missing D001 d2 (label 2, best grade 1) and D002 d7 (label 1, best 0); B at min_grade on
# 1 of its 2 graded non-relevant passages (d3), C on 1 of 1 (d5); d9 relevant, ungraded.


def test_the_lists_name_missing_passages_and_spurious_items(personas: Personas,
                                                          case: RubricCase) -> None:
    upload_reference(personas, qrels=manual_qrels_text(MANUAL))
    body = get(personas, GAPS, track="dl")
    assert (body["track"], body["qid"], body["min_grade"], body["relevant_level"]) == (
        "dl", None, 4, 1)
    assert body["reference"]["qrels"] == {"file": "qrels.txt", "queries": 2, "judgments": 7}
    assert body["missing"] == [
        {"qid": "D001", "docid": "d2", "level": 2, "best_grade": 1},
        {"qid": "D002", "docid": "d7", "level": 1, "best_grade": 0}]
    assert body["spurious"] == [
        {"id": case.items["C"].pk, "item_id": case.item_id("C"), "qid": "D002",
         "text": "Toy Story was the first computer-animated feature.", "hits": ["d5"],
         "judged": 1, "share": 1.0},
        {"id": case.items["B"].pk, "item_id": case.item_id("B"), "qid": "D001",
         "text": "When was Alien released?", "hits": ["d3"], "judged": 2, "share": 0.5}]
    assert body["unjudged"] == 1


def test_the_lists_filter_by_a_query_of_the_manual_qrels(personas: Personas,
                                                         case: RubricCase) -> None:
    upload_reference(personas, qrels=manual_qrels_text(MANUAL))
    body = get(personas, GAPS, track="dl", qid="D002")
    assert body["qid"] == "D002"
    assert [(m["qid"], m["docid"]) for m in body["missing"]] == [("D002", "d7")]
    assert [s["item_id"] for s in body["spurious"]] == [case.item_id("C")]
    assert body["unjudged"] == 0
    message = GAPS_QID_UNKNOWN.format(track="dl", qid="D003")  # a query, but not judged
    assert get(personas, GAPS, expect=400, track="dl", qid="D003")["errors"] == [
        {"field": "qid", "message": message}]


def test_without_manual_qrels_the_lists_say_what_to_upload(personas: Personas,
                                                           case: RubricCase) -> None:
    body = get(personas, GAPS, expect=409, track="dl")
    assert body["detail"] == NO_MANUAL_REFERENCE.format(track="dl", slug="toy")
    assert "/api/v1/campaigns/toy/reference/" in body["detail"]
    upload_reference(personas, leaderboard="run,score\nWASEDA-R1,0.5\n")
    body = get(personas, GAPS, expect=409, track="dl")
    assert body["detail"] == NO_MANUAL_QRELS.format(track="dl", slug="toy")
    assert body["errors"] == [{"field": "", "message": body["detail"]}]
    assert "missing" not in body and "spurious" not in body


def test_the_lists_name_a_missing_or_unknown_track(personas: Personas, case: RubricCase) -> None:
    assert get(personas, GAPS, expect=400)["errors"] == [
        {"field": "track", "message": TRACK_MISSING}]
    assert get(personas, GAPS, expect=400, track="nope")["errors"] == [
        {"field": "track", "message": TRACK_UNKNOWN.format(slug="toy", track="nope",
                                                           tracks="dl")}]


# --- the schema ---------------------------------------------------------------------------


def test_the_schema_documents_the_three_analyses(personas: Personas) -> None:
    schema = personas.client("anonymous").get(
        "/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, codes in (("grid", {"200", "400", "401", "404"}),
                        ("answers", {"200", "400", "401", "404"}),
                        ("testbank-gaps", {"200", "400", "401", "404", "409"})):
        operation = schema["paths"][f"/api/v1/campaigns/{{slug}}/verification/{path}/"]["get"]
        assert set(operation["responses"]) == codes, path
        parameters = {p["name"]: p.get("required", False) for p in operation["parameters"]}
        assert parameters["track"] is True and "qid" in parameters, path
    components = schema["components"]["schemas"]
    assert {"docid", "retrieved_by", "grades"} <= set(components["GridPassage"]["properties"])
    assert {"missing", "spurious", "unjudged"} <= set(
        components["TestBankGaps"]["properties"])

