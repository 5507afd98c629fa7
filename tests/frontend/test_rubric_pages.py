"""The organiser pages of a RUBRIC campaign (docs/rubric.md): the test bank, and a
ranking track's grid, verify-grading, passage, grade post-edit and manual-qrels pages.

On tests/scoring/rubric_case.py's hand-sized case: items A, B (D001) and C, E (D002);
track `dl` of depth 3, so D001's pool is d1, d2, d3 (WASEDA-R1's top 3) and d3, d4
(KYOTO-R1's), and d8 (WASEDA-R1's 4th) is graded but not in it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from campaign import testbank
from campaign.models import BankItemStatus, TestBankItem
from campaign.testbank import NOTE_REQUIRED, SAME_TEXT, ItemChange
from frontend.rubric import verification
from frontend.rubric.forms import NOT_AN_ITEM
from grading.models import Judgment, JudgmentEdit, JudgmentKind, JudgmentStatus
from scoring.models import ManualReference
from scoring.services import campaign_score
from tests.factories import CampaignFactory, QuestionFactory, TrackFactory
from tests.scoring.rubric_case import RubricCase, rubric_case
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

BANK = "/campaigns/toy/testbank/"
GRID = "/campaigns/toy/tracks/dl/grid/"
VERIFY = "/campaigns/toy/tracks/dl/verify/"
PASSAGE = "/campaigns/toy/tracks/dl/passage/"
GAPS = "/campaigns/toy/tracks/dl/missing-and-spurious/"
OTHERS = ["participant_a", "participant_b", "outsider"]


@pytest.fixture
def case(personas: Personas) -> RubricCase:
    return rubric_case(personas)


def html_of(client: Client, url: str, expect: int = 200, **query: Any) -> str:
    response = client.get(url, query)
    assert response.status_code == expect, response.content.decode()[:2000]
    return response.content.decode()


def grid_rows(html: str) -> list[str]:
    return re.findall(r'<tr data-docid="([^"]+)">', html)


def grid_columns(html: str) -> list[str]:
    return re.findall(r'<th scope="col" data-item="([^"]+)">', html)


def cell(html: str, docid: str, item_id: str) -> str:
    row = html.split(f'<tr data-docid="{docid}">', 1)[1].split("</tr>", 1)[0]
    return row.split(f'<td data-item="{item_id}">', 1)[1].split("</td>", 1)[0]


def grade_url(case: RubricCase, docid: str, letter: str) -> str:
    return f"/campaigns/toy/tracks/dl/grades/{case.judgments[docid, letter].pk}/"


# --- who may see them -------------------------------------------------------------


@pytest.mark.parametrize("who", OTHERS)
@pytest.mark.parametrize("url", [BANK, GRID, VERIFY, GAPS, PASSAGE + "?qid=D001&docid=d1"])
def test_no_one_but_an_organiser_finds_the_pages(personas: Personas, case: RubricCase,
                                                 who: str, url: str) -> None:
    response = signed_in(personas, who).get(url)
    assert response.status_code == 404
    assert "Who directed Alien?" not in response.content.decode()


@pytest.mark.parametrize("who", OTHERS)
def test_no_one_but_an_organiser_finds_an_item_or_a_grade(personas: Personas, case: RubricCase,
                                                         who: str) -> None:
    client = signed_in(personas, who)
    assert client.get(f"{BANK}{case.items['A'].pk}/").status_code == 404
    assert client.get(grade_url(case, "d1", "A")).status_code == 404
    response = client.post(grade_url(case, "d1", "A"), {"grade": 0, "note": "mine"})
    assert response.status_code == 404
    assert not JudgmentEdit.objects.exists()


def test_an_anonymous_visitor_is_sent_to_sign_in(personas: Personas, case: RubricCase) -> None:
    for url in (BANK, GRID, f"{BANK}{case.items['A'].pk}/"):
        response = Client().get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_a_track_that_is_not_graded_on_a_test_bank_has_no_grid(personas: Personas,
                                                              case: RubricCase) -> None:
    TrackFactory.create(campaign=personas.campaign, slug="ac", kind="ac")
    organiser = signed_in(personas, "organiser")
    assert organiser.get("/campaigns/toy/tracks/ac/grid/").status_code == 404
    assert organiser.get("/campaigns/toy/tracks/nope/grid/").status_code == 404


def test_the_dashboard_links_to_the_test_bank_and_the_tracks_verification(
    personas: Personas, case: RubricCase
) -> None:
    html = html_of(signed_in(personas, "organiser"), "/campaigns/toy/dashboard/")
    for url in (BANK, GRID, VERIFY, GAPS):
        assert f'href="{url}"' in html


# --- the test bank ------------------------------------------------------------------


def test_the_test_bank_lists_the_items_per_query_with_their_status(
    personas: Personas, case: RubricCase
) -> None:
    html = html_of(signed_in(personas, "organiser"), BANK)
    d001 = html.split('id="q-D001-h"', 1)[1].split("</section>", 1)[0]
    d002 = html.split('id="q-D002-h"', 1)[1]
    assert "Who directed Alien?" in d001 and "When was Alien released?" in d001
    assert "Toy Story was made by Pixar." in d002 and "Who directed Alien?" not in d002
    assert d001.count('<td class="status-active">active</td>') == 2
    assert "4 item(s)." in html


def test_the_test_bank_filters_by_query_and_status(personas: Personas, case: RubricCase) -> None:
    organiser = signed_in(personas, "organiser")
    html = html_of(organiser, BANK, qid="D002")
    assert "Toy Story was made by Pixar." in html and "Who directed Alien?" not in html
    html = html_of(organiser, BANK, status="retired")
    assert "0 item(s)." in html


def test_a_bad_filter_value_is_a_form_error_not_a_500(personas: Personas, case: RubricCase) -> None:
    html = html_of(signed_in(personas, "organiser"), BANK, expect=400, status="gone")
    assert 'role="alert">Status: Select a valid choice.' in html
    assert "Who directed Alien?" not in html.split('id="add-h"')[0]


def test_an_organiser_adds_an_item_audited(personas: Personas, case: RubricCase) -> None:
    response = signed_in(personas, "organiser").post(BANK, {
        "qid": "D001", "target": "questions", "text": "Who wrote Alien?",
        "answers": "Dan O'Bannon\n\n", "note": "the screenplay matters"})
    item = TestBankItem.objects.get(text="Who wrote Alien?")
    assert response.status_code == 302
    assert response["Location"] == f"{BANK}{item.pk}/"
    assert item.answers == ["Dan O'Bannon"]
    assert item.created_by == personas.organiser
    (added,) = item.edits.all()
    assert (added.action, added.user, added.note) == ("add", personas.organiser,
                                                      "the screenplay matters")


def test_adding_an_item_the_query_already_has_is_refused_beside_the_text(
    personas: Personas, case: RubricCase
) -> None:
    response = signed_in(personas, "organiser").post(BANK, {
        "qid": "D001", "target": "questions", "text": "Who directed Alien?", "answers": ""})
    assert response.status_code == 400
    message = SAME_TEXT.format(item_id=case.item_id("A"), qid="D001")
    assert f"Text: {escape(message)}" in response.content.decode()
    assert TestBankItem.objects.count() == 4


def test_an_organiser_edits_an_item_and_the_history_keeps_the_old_text(
    personas: Personas, case: RubricCase
) -> None:
    organiser = signed_in(personas, "organiser")
    item = case.items["B"]
    url = f"{BANK}{item.pk}/"
    response = organiser.post(url, {"text": "In which year did Alien come out?",
                                    "answers": "1979", "status": "active",
                                    "note": "clearer wording"})
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.text == "In which year did Alien come out?"
    assert item.answers == ["1979"]
    edit = item.edits.get(action="edit")
    assert (edit.user, edit.note, edit.previous_text) == (
        personas.organiser, "clearer wording", "When was Alien released?")
    html = html_of(organiser, url)
    # The case's runs are graded: the edited item's pairs are graded again at once.
    assert f"Item {item.item_id} edited. Its pairs are being graded" in html
    history = html.split('<ol class="history">', 1)[1]
    assert ("Text was <q>When was Alien released?</q>, now "
            "<q>In which year did Alien come out?</q>.") in history
    assert "Note: clearer wording" in history


def test_an_edit_without_a_note_changes_nothing(personas: Personas, case: RubricCase) -> None:
    item = case.items["B"]
    response = signed_in(personas, "organiser").post(
        f"{BANK}{item.pk}/", {"text": "Other?", "answers": "", "status": "active", "note": ""})
    assert response.status_code == 400
    assert "Note for the audit trail (why the test bank changes): This field is required." \
        in response.content.decode()
    item.refresh_from_db()
    assert item.text == "When was Alien released?"
    assert not item.edits.filter(action="edit").exists()


def test_a_blank_note_is_refused_by_the_service_beside_the_note(personas: Personas,
                                                                case: RubricCase) -> None:
    item = case.items["B"]
    response = signed_in(personas, "organiser").post(
        f"{BANK}{item.pk}/", {"text": "Other?", "answers": "", "status": "active",
                              "note": "   "})
    assert response.status_code == 400
    assert escape(NOTE_REQUIRED) in response.content.decode()
    assert not item.edits.filter(action="edit").exists()


def test_an_organiser_retires_an_item_with_a_note_and_it_is_kept(
    personas: Personas, case: RubricCase
) -> None:
    organiser = signed_in(personas, "organiser")
    item = case.items["E"]
    url = f"{BANK}{item.pk}/retire/"
    assert organiser.post(url, {"note": ""}).status_code == 400
    item.refresh_from_db()
    assert item.status == BankItemStatus.ACTIVE
    assert organiser.post(url, {"note": "not in the query"}).status_code == 302
    item.refresh_from_db()
    assert item.status == BankItemStatus.RETIRED
    retired = item.edits.get(action="retire")
    assert (retired.note, retired.previous_status) == ("not in the query", "active")
    html = html_of(organiser, f"{BANK}{item.pk}/")
    assert "Retired items are kept as history" in html
    assert "Save the item" not in html


def test_an_item_of_another_campaign_is_not_found(personas: Personas, case: RubricCase) -> None:
    other = CampaignFactory.create(slug="other")
    QuestionFactory.create(campaign=other, qid="X1")
    theirs = testbank.testbank_add(campaign=other, user=None, qid="X1", target="questions",
                                   text="Why?")
    assert signed_in(personas, "organiser").get(f"{BANK}{theirs.pk}/").status_code == 404


# --- the grid --------------------------------------------------------------------------


def test_the_grid_shows_the_tracks_pool_by_the_querys_items(personas: Personas,
                                                           case: RubricCase) -> None:
    html = html_of(signed_in(personas, "organiser"), GRID)  # the first query: D001
    assert grid_rows(html) == ["d1", "d2", "d3", "d4"]  # d8 lies below depth 3
    assert grid_columns(html) == [case.item_id("A"), case.item_id("B")]
    first = cell(html, "d1", case.item_id("A"))
    assert '<strong class="grade status-graded">5</strong>' in first
    assert "d1 on A" in first
    assert '<strong class="grade">2</strong>' in cell(html, "d1", case.item_id("B"))
    # Each passage links to its text, and says who retrieved it where.
    assert f'href="{PASSAGE}?qid=D001&amp;docid=d3"' in html
    assert "KYOTO-R1 #1, WASEDA-R1 #3" in html


def test_the_grid_filters_by_query_item_and_grade(personas: Personas, case: RubricCase) -> None:
    organiser = signed_in(personas, "organiser")
    html = html_of(organiser, GRID, qid="D002")
    assert grid_rows(html) == ["d5", "d6", "d7"]
    assert grid_columns(html) == [case.item_id("C"), case.item_id("E")]
    html = html_of(organiser, GRID, qid="D001", item=case.item_id("B"))
    assert grid_columns(html) == [case.item_id("B")]
    html = html_of(organiser, GRID, qid="D001", grade="4")
    assert grid_rows(html) == ["d3"]  # B 4 on d3; d8's 5s are not in the pool
    html = html_of(organiser, GRID, qid="D001", item=case.item_id("B"), grade="5")
    assert grid_rows(html) == []
    assert "0 passage(s) match." in html


@pytest.mark.parametrize(("query", "message"), [
    ({"grade": "9"}, "Grade: Select a valid choice. 9 is not one of the available choices."),
    ({"grade": "four"}, "Grade: Select a valid choice."),
    ({"qid": "D999"}, "Query: Select a valid choice. D999 is not one of the available choices."),
    ({"qid": "D003"}, "Query: Select a valid choice."),  # D003 has no items
    ({"qid": "D001", "item": "D002/nope"},
     "Item (its id): " + escape(NOT_AN_ITEM.format(item="D002/nope", qid="D001"))),
])
def test_a_bad_grid_filter_is_a_form_error_not_a_500(personas: Personas, case: RubricCase,
                                                    query: dict[str, str], message: str) -> None:
    for url in (GRID, VERIFY):
        html = html_of(signed_in(personas, "organiser"), url, expect=400, **query)
        assert message in html
        assert "d1 on A" not in html


def test_the_grid_is_paginated(personas: Personas, case: RubricCase,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verification, "GRID_PAGE_SIZE", 3)
    organiser = signed_in(personas, "organiser")
    first = html_of(organiser, GRID, qid="D001")
    assert grid_rows(first) == ["d1", "d2", "d3"]
    assert "Page 1 of 2" in first and 'href="?qid=D001&amp;page=2"' in first
    assert grid_rows(html_of(organiser, GRID, qid="D001", page="2")) == ["d4"]
    assert grid_rows(html_of(organiser, GRID, qid="D001", page="x")) == ["d1", "d2", "d3"]


def test_a_stale_grade_shows_as_not_graded(personas: Personas, case: RubricCase) -> None:
    testbank.testbank_edit(item=case.items["B"], user=None, change=ItemChange(text="Alien's year?"),
                  note="reworded")
    html = html_of(signed_in(personas, "organiser"), GRID, qid="D001")
    assert "not graded on the item's current text" in cell(html, "d1", case.item_id("B"))
    assert "d1 on A" in cell(html, "d1", case.item_id("A"))


def test_a_post_edit_through_the_grid_is_stored_audited_and_queues_scoring(
    personas: Personas, case: RubricCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued: list[int] = []
    monkeypatch.setattr("grading.review.edits.enqueue_scoring", queued.append)
    organiser = signed_in(personas, "organiser")
    back = f"{GRID}?qid=D001&grade=0"
    page = html_of(organiser, back)
    assert f'action="{grade_url(case, "d4", "A")}"' in cell(page, "d4", case.item_id("A"))
    response = organiser.post(grade_url(case, "d4", "A"),
                              {"grade": "5", "note": "Ridley Scott is named", "next": back})
    assert response.status_code == 302 and response["Location"] == back
    judgment = Judgment.objects.get(pk=case.judgments["d4", "A"].pk)
    assert judgment.edited_label == {"grade": 5, "answer": "d4 on A"}
    assert judgment.status == JudgmentStatus.REVIEWED
    (edit,) = judgment.edits.all()
    assert (edit.edited_by, edit.note, edit.previous_label, edit.new_label) == (
        personas.organiser, "Ridley Scott is named", {"grade": 0, "answer": "d4 on A"},
        {"grade": 5, "answer": "d4 on A"})
    assert queued == [personas.campaign.pk]
    html = html_of(organiser, GRID, qid="D001")
    assert "Grade set to 5" in html
    edited = cell(html, "d4", case.item_id("A"))
    assert '<strong class="grade status-graded">5</strong>' in edited
    assert '<span class="badge">edited</span>' in edited
    # The grade page lists the edit in its history (the partial the review page shares).
    history = html_of(organiser, grade_url(case, "d4", "A")).split("<h2>History</h2>")[1]
    assert "Never edited." not in history.split("<h2>")[0]
    assert "Note: Ridley Scott is named" in history.split("<h2>")[0]


def test_a_post_edit_the_scores_follow(personas: Personas, case: RubricCase) -> None:
    """The leaderboard reads the edit: KYOTO-R1's D001 covers A once d4 is graded 5."""
    (before,) = campaign_score(campaign=personas.campaign)
    assert before.scores.get(run=case.runs["KYOTO-R1"]).aggregates["rubric_cover@10"] == 0.25
    signed_in(personas, "organiser").post(grade_url(case, "d4", "A"),
                                          {"grade": "5", "note": "named"})
    (after,) = campaign_score(campaign=personas.campaign)
    assert after.scores.get(run=case.runs["KYOTO-R1"]).aggregates["rubric_cover@10"] == 0.5


@pytest.mark.parametrize(("data", "message"), [
    ({"grade": "5", "note": ""}, "Note for the audit trail (why the grade changes): "
                                 "This field is required."),
    ({"grade": "6", "note": "x"}, "Grade (0..5): Select a valid choice."),
    ({"note": "x"}, "Grade (0..5): This field is required."),
])
def test_a_bad_post_edit_stores_nothing(personas: Personas, case: RubricCase,
                                        data: dict[str, str], message: str) -> None:
    response = signed_in(personas, "organiser").post(grade_url(case, "d4", "A"), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not JudgmentEdit.objects.exists()


def test_the_grade_page_is_only_for_rubric_grades_of_the_campaign(
    personas: Personas, case: RubricCase
) -> None:
    answer = Judgment.objects.create(
        campaign=personas.campaign, kind=JudgmentKind.ANSWER, judge_model="m",
        prompt_version="v", input_hash="h", input={}, status=JudgmentStatus.DONE,
        llm_label={"correct": True, "relevant": []})
    organiser = signed_in(personas, "organiser")
    assert organiser.get(f"/campaigns/toy/tracks/dl/grades/{answer.pk}/").status_code == 404
    assert organiser.get(f"/campaigns/toy/tracks/dl/grades/{2**63}/").status_code == 404
    html = html_of(organiser, grade_url(case, "d3", "B"))
    assert '<strong id="current-grade">4</strong>' in html
    assert "Who directed Alien?" not in html and "When was Alien released?" in html


def test_the_review_page_of_a_grade_sends_the_organiser_to_the_grade_page(
    personas: Personas, case: RubricCase
) -> None:
    # The review queue links every judgment to /judgments/ID/, whose correct/relevant
    # form cannot edit a grade: a rubric judgment goes on to its own page.
    organiser = signed_in(personas, "organiser")
    url = grade_url(case, "d3", "B")
    judgment_id = int(url.rstrip("/").rsplit("/", 1)[1])
    response = organiser.get(f"/judgments/{judgment_id}/")
    assert response.status_code == 302
    assert response["Location"] == url


# --- verify grading, passages, missing and spurious -----------------------------------


def answers_at(html: str, item_id: str, grade: int) -> str:
    section = html.split(f"({item_id})</span></h2>", 1)[1].split("</section>", 1)[0]
    return section.split(f'<ul class="answers" data-grade="{grade}">', 1)[1].split("</ul>")[0]


def test_verify_grading_groups_each_items_answers_by_grade(personas: Personas,
                                                          case: RubricCase) -> None:
    html = html_of(signed_in(personas, "organiser"), VERIFY, qid="D001")
    a = case.item_id("A")
    grades = re.findall(r'data-grade="(\d)"', html.split(f"({a})</span></h2>")[1]
                        .split("</section>")[0])
    assert grades == ["5", "3", "1", "0"]  # d1, d3, d2, d4: highest first
    assert "<q>d1 on A</q>" in answers_at(html, a, 5)
    assert "<q>d4 on A</q>" in answers_at(html, a, 0)
    assert "d8 on A" not in html  # below the track's depth
    assert "Answer key" not in html  # rubric_case's items have none


def test_verify_grading_filters_by_item_and_grade(personas: Personas, case: RubricCase) -> None:
    html = html_of(signed_in(personas, "organiser"), VERIFY, qid="D001",
                   item=case.item_id("B"), grade="4")
    assert re.findall(r'data-grade="(\d)"', html) == ["4"]
    assert "<q>d3 on B</q>" in html
    assert "Who directed Alien?" not in html


def test_the_passage_page_shows_the_text_the_runs_and_the_grades(
    personas: Personas, case: RubricCase
) -> None:
    organiser = signed_in(personas, "organiser")
    html = html_of(organiser, PASSAGE, qid="D001", docid="d3")
    assert "Passage 3 about films." in html
    assert "KYOTO-R1 (track dl), rank 1" in html and "WASEDA-R1 (track dl), rank 3" in html
    assert "d3 on A" in html and "d3 on B" in html
    assert f'href="{grade_url(case, "d3", "B")}"' in html
    assert organiser.get(PASSAGE, {"qid": "D001", "docid": "nowhere"}).status_code == 404


def manual_reference(personas: Personas, case: RubricCase, *,
                     qrels: dict[str, dict[str, int]] | None) -> ManualReference:
    assert isinstance(personas.organiser, User)
    return ManualReference.objects.create(
        track=case.track, qrels=qrels, leaderboard=None if qrels else {"WASEDA-R1": 0.5},
        relevant_level=1, qrels_filename="manual.qrels" if qrels else "",
        uploaded_by=personas.organiser, uploaded_at=timezone.now())


#: Manual labels against rubric_case's grades (min_grade 4):
#:   D001 d1 1: relevant, A 5                 -> answered
#:        d2 2: relevant, A 1, B 0            -> missing (best grade 1)
#:        d3 0: non-relevant, A 3, B 4        -> B spurious here
#:        d4 0: non-relevant, A 0, B 0        -> judged on A and B, no hit
#:        d9 1: relevant, never graded        -> unjudged
#:   D002 d5 0: non-relevant, C 4, E 3        -> C spurious here
#:        d7 1: relevant, C 0, E 0            -> missing (best grade 0)
#: So B is at min_grade on 1 of the 2 non-relevant passages graded on it, C on 1 of 1.
MANUAL = {"D001": {"d1": 1, "d2": 2, "d3": 0, "d4": 0, "d9": 1},
          "D002": {"d5": 0, "d7": 1}}


def test_the_manual_qrels_lists_say_what_they_need(personas: Personas, case: RubricCase) -> None:
    organiser = signed_in(personas, "organiser")
    html = html_of(organiser, GAPS)
    assert "Upload manual qrels to see these lists" in html
    assert "no manual reference yet" in html
    assert 'id="missing"' not in html and 'id="spurious"' not in html
    manual_reference(personas, case, qrels=None)  # an official leaderboard alone
    html = html_of(organiser, GAPS)
    assert "an official leaderboard but no manual qrels" in html


def test_the_manual_qrels_lists_name_missing_passages_and_spurious_items(
    personas: Personas, case: RubricCase
) -> None:
    manual_reference(personas, case, qrels=MANUAL)
    html = html_of(signed_in(personas, "organiser"), GAPS)
    missing = html.split('<table id="missing">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r"<td>(D\d+)</td><th scope=\"row\"><a [^>]+>(d\d)</a></th>"
                      r"<td>(\d)</td><td>(\d)</td>", missing) == [
        ("D001", "d2", "2", "1"), ("D002", "d7", "1", "0")]
    assert f'href="{PASSAGE}?qid=D001&amp;docid=d2"' in missing
    spurious = html.split('<table id="spurious">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr data-item="([^"]+)">', spurious) == [case.item_id("C"),
                                                                case.item_id("B")]
    assert "1 of 1" in spurious and "1 of 2" in spurious
    assert "1 relevant passage(s) have no grade" in html
    assert "Missing from the test bank (2)" in html and "Spurious items (2)" in html


def test_the_manual_qrels_lists_filter_by_query(personas: Personas, case: RubricCase) -> None:
    manual_reference(personas, case, qrels=MANUAL)
    organiser = signed_in(personas, "organiser")
    html = html_of(organiser, GAPS, qid="D002")
    assert "Missing from the test bank (1)" in html and "Spurious items (1)" in html
    assert case.item_id("B") not in html
    html = html_of(organiser, GAPS, expect=400, qid="D404")
    assert "Query: Select a valid choice. D404 is not one of the available choices." in html
    assert 'id="missing"' not in html


# --- results -------------------------------------------------------------------------


def test_the_results_page_plots_rubric_cover_per_run_with_intervals(
    personas: Personas, case: RubricCase
) -> None:
    campaign_score(campaign=personas.campaign)
    html = html_of(signed_in(personas, "organiser"), "/campaigns/toy/results/")
    section = html.split('id="dl-plots-intervals"', 1)[1].split("</section>", 1)[0]
    assert "Mean Rubric-Cover@10 with 95% intervals" in section
    assert '<svg' in section and 'role="img"' in section
    data = section.split('id="dl-plot-intervals-data"', 1)[1]
    assert "WASEDA-R1" in data and "0.7500" in data and "KYOTO-R1" in data and "0.2500" in data
