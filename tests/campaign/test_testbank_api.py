"""The test-bank API: organisers of the campaign list, add, edit
and retire items, every change audited; everyone else finds nothing there at all."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rest_framework.test import APIClient

from campaign import selectors, testbank
from campaign.models import TestBankEdit, TestBankItem, text_hash
from submissions.formats.test_bank import default_item_id, parse_test_bank
from tests.factories import CampaignFactory, QuestionFactory, make_member
from tests.support import Personas

BANK = "/api/v1/campaigns/{slug}/testbank/"
ITEM = "/api/v1/testbank/{id}/"


@pytest.fixture
def item(personas: Personas) -> TestBankItem:
    return testbank.testbank_add(campaign=personas.campaign, user=None, qid="D001",
                                 target="questions", text="Who directed Alien?",
                                 answers=["Ridley Scott"])


@pytest.fixture
def rival(personas: Personas) -> APIClient:
    """The organiser of another campaign, signed in through the API."""
    other = CampaignFactory.create(slug="other")
    QuestionFactory.create(campaign=other, qid="D001")
    personas.rival = make_member(other, "rita").user  # type: ignore[attr-defined]
    return personas.client("rival")


def client_of(personas: Personas, who: str, rival: APIClient) -> APIClient:
    return rival if who == "rival" else personas.client(who)


OUTSIDERS = ["rival", "participant_a", "outsider", "anonymous"]


@pytest.mark.django_db
class TestOrganisers:
    def test_they_list_the_items_of_a_query(self, personas: Personas, item: TestBankItem,
                                            ) -> None:
        testbank.testbank_add(campaign=personas.campaign, user=None, qid="D002",
                              target="nuggets", text="Toy Story was released in 1995.")
        response = personas.client("organiser").get(
            BANK.format(slug="toy"), {"qid": "D001"})
        assert response.status_code == 200
        assert [(i["qid"], i["item_id"], i["target"], i["text"], i["answers"], i["status"])
                for i in response.json()] == [
            ("D001", default_item_id("D001", "Who directed Alien?"), "questions",
             "Who directed Alien?", ["Ridley Scott"], "active")]

    def test_they_add_an_item_and_the_addition_is_audited(self, personas: Personas) -> None:
        response = personas.client("organiser").post(BANK.format(slug="toy"), {
            "qid": "D002", "target": "questions", "text": "When was Toy Story released?",
            "answers": ["1995"]}, format="json")

        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["item_id"], body["created_by"], body["text_hash"]) == (
            default_item_id("D002", "When was Toy Story released?"), "olga",
            text_hash("When was Toy Story released?"))
        assert [(h["action"], h["user"], h["previous_text"], h["text"])
                for h in body["history"]] == [
            ("add", "olga", "", "When was Toy Story released?")]

    def test_an_edit_keeps_the_previous_text_and_changes_the_items_input(
        self, personas: Personas, item: TestBankItem
    ) -> None:
        response = personas.client("organiser").patch(ITEM.format(id=item.pk), {
            "text": "Who directed the 1979 film Alien?", "answers": ["Ridley Scott", "Scott"],
            "note": "name the year"}, format="json")

        assert response.status_code == 200, response.json()
        item.refresh_from_db()
        assert (item.item_id, item.text, item.answers) == (
            default_item_id("D001", "Who directed Alien?"),
            "Who directed the 1979 film Alien?", ["Ridley Scott", "Scott"])
        assert item.text_hash == text_hash("Who directed the 1979 film Alien?")
        assert item.text_hash != text_hash("Who directed Alien?")
        edit = TestBankEdit.objects.get(item=item, action="edit")
        assert (edit.user.username if edit.user else None, edit.note, edit.previous_text,
                edit.previous_answers, edit.text) == (
            "olga", "name the year", "Who directed Alien?", ["Ridley Scott"],
            "Who directed the 1979 film Alien?")

    def test_retiring_keeps_the_item_and_its_history(
        self, personas: Personas, item: TestBankItem
    ) -> None:
        response = personas.client("organiser").delete(
            ITEM.format(id=item.pk) + "?note=asks+the+same+as+D001%2F2")

        assert response.status_code == 200, response.json()
        item.refresh_from_db()
        assert item.status == "retired"
        assert list(item.edits.values_list("action", "note", "previous_status")) == [
            ("add", "", ""), ("retire", "asks the same as D001/2", "active")]
        listed = personas.client("organiser").get(BANK.format(slug="toy")).json()
        assert [(i["id"], i["status"]) for i in listed] == [(item.pk, "retired")]
        active = personas.client("organiser").get(BANK.format(slug="toy"),
                                                  {"status": "active"}).json()
        assert active == []

    def test_the_export_has_the_workbench_shape_without_retired_items(
        self, personas: Personas, item: TestBankItem
    ) -> None:
        gone = testbank.testbank_add(campaign=personas.campaign, user=None, qid="D001",
                                     target="questions", text="What year?")
        personas.client("organiser").delete(ITEM.format(id=gone.pk) + "?note=vague")
        out = io.StringIO()

        selectors.testbank_export(campaign=personas.campaign, text_file=out)

        parsed = parse_test_bank(io.BytesIO(out.getvalue().encode()))
        assert parsed.problems == []
        [bank] = parsed.records
        assert (bank.query_id, bank.target) == ("D001", "questions")
        assert [(i.item_id, i.text, i.answers) for i in bank.items] == [
            (item.item_id, "Who directed Alien?", ("Ridley Scott",))]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        pytest.param({"qid": "D009", "target": "questions", "text": "Q?"}, "qid",
                     "'D009' is not a query of toy", id="unknown query"),
        pytest.param({"qid": "D001", "target": "facts", "text": "Q?"}, "target",
                     '"facts" is not a valid choice.', id="unknown target"),
        pytest.param({"qid": "D001", "target": "nuggets", "text": "Alien is from 1979."},
                     "target", "query D001 holds questions, so its items cannot be nuggets "
                     "(the workbench's format has one kind of item per query)",
                     id="mixed targets"),
        pytest.param({"qid": "D002", "target": "nuggets", "text": "N.", "answers": ["a"]},
                     "answers", "a nugget has no answer key; answers are for questions only",
                     id="answers for a nugget"),
        pytest.param({"qid": "D001", "target": "questions", "text": "Who directed Alien?"},
                     "text", "item {item_id} of query D001 already says this",
                     id="the same text twice"),
        pytest.param({"qid": "D001", "target": "questions", "text": "   "}, "text",
                     "the text is empty; expected the item's question or nugget",
                     id="blank text"),
        pytest.param({"qid": "D001", "target": "questions", "text": "Who\x00?"}, "text",
                     "found the control character U+0000 at character 4 of the text; "
                     "expected no control characters other than tab and line breaks",
                     id="NUL byte"),
        pytest.param({"qid": "D001", "target": "questions", "text": "Who\x07?"}, "text",
                     "found the control character U+0007 at character 4 of the "
                     "text; expected no control characters other than tab and line breaks",
                     id="control character"),
        pytest.param({"qid": "D001", "target": "questions", "text": "x" * 4001}, "text",
                     "found 4001 characters in the text; expected at most 4000",
                     id="huge text"),
        pytest.param({"qid": "D001", "target": "questions"}, "text",
                     "This field is required.", id="no text"),
    ],
)
def test_a_bad_addition_is_a_400_naming_the_field(
    personas: Personas, item: TestBankItem, body: dict[str, Any], field: str,
    message: str,
) -> None:
    response = personas.client("organiser").post(BANK.format(slug="toy"), body, format="json")

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [error["field"] for error in errors] == [field]
    assert errors[0]["message"] == message.format(item_id=item.item_id)
    assert TestBankItem.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "query", "body", "field", "message"),
    [
        pytest.param("patch", "", {"text": "Who?"}, "note", "This field is required.",
                     id="edit without a note"),
        pytest.param("patch", "", {"text": "Who?", "note": "  "}, "note",
                     "a note is required: say why the test bank changes", id="blank note"),
        pytest.param("patch", "", {"note": "why"}, "text",
                     "nothing to change: give text, answers or status", id="empty edit"),
        pytest.param("patch", "", {"text": "y" * 10_000, "note": "long"}, "text",
                     "found 10000 characters in the text; expected at most 4000",
                     id="huge text"),
        pytest.param("delete", "", None, "note",
                     "a note is required: say why the test bank changes", id="retire, no note"),
        pytest.param("delete", "?note=" + "n" * 2001, None, "note",
                     "The note has 2001 characters; expected at most 2000",
                     id="retire, huge note"),
    ],
)
def test_a_bad_change_is_a_400_and_changes_nothing(
    personas: Personas, item: TestBankItem, method: str, query: str,
    body: dict[str, Any] | None, field: str, message: str,
) -> None:
    client = personas.client("organiser")
    response = getattr(client, method)(ITEM.format(id=item.pk) + query, body, format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": field, "message": message}]
    item.refresh_from_db()
    assert (item.text, item.status, item.edits.count()) == ("Who directed Alien?", "active", 1)


@pytest.mark.django_db
def test_a_retired_item_cannot_be_edited(personas: Personas, item: TestBankItem) -> None:
    client = personas.client("organiser")
    client.delete(ITEM.format(id=item.pk) + "?note=gone")
    response = client.patch(ITEM.format(id=item.pk), {"text": "Back?", "note": "undo"},
                            format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        f"item {item.item_id} is retired (kept as history); add a new item instead")


@pytest.mark.django_db
@pytest.mark.parametrize("who", OUTSIDERS)
class TestEveryoneElseFindsNothing:
    """Participants, another campaign's organiser, signed-in outsiders and anonymous
    visitors get the same 404 as for an item or campaign that does not exist."""

    def assert_not_found(self, response: Any, absent: Any) -> None:
        assert response.status_code == absent.status_code == 404
        assert response.json() == absent.json()
        assert set(response.json()) == {"detail", "errors"}

    def test_not_the_list(self, personas: Personas, item: TestBankItem, rival: APIClient,
                          who: str) -> None:
        client = client_of(personas, who, rival)
        response = client.get(BANK.format(slug="toy"))
        absent = client.get(BANK.format(slug="nowhere"))
        self.assert_not_found(response, absent)
        assert "Who directed" not in response.content.decode()

    def test_not_an_addition(self, personas: Personas, item: TestBankItem, rival: APIClient,
                             who: str) -> None:
        client = client_of(personas, who, rival)
        body = {"qid": "D001", "target": "questions", "text": "Planted?"}
        response = client.post(BANK.format(slug="toy"), body, format="json")
        self.assert_not_found(response, client.post(BANK.format(slug="nowhere"), body,
                                                    format="json"))
        assert TestBankItem.objects.count() == 1

    def test_not_an_item(self, personas: Personas, item: TestBankItem, rival: APIClient,
                         who: str) -> None:
        client = client_of(personas, who, rival)
        self.assert_not_found(client.get(ITEM.format(id=item.pk)),
                              client.get(ITEM.format(id=item.pk + 1000)))

    def test_not_an_edit(self, personas: Personas, item: TestBankItem, rival: APIClient,
                         who: str) -> None:
        client = client_of(personas, who, rival)
        body = {"text": "Changed?", "note": "mine now"}
        self.assert_not_found(client.patch(ITEM.format(id=item.pk), body, format="json"),
                              client.patch(ITEM.format(id=item.pk + 1000), body,
                                           format="json"))
        item.refresh_from_db()
        assert (item.text, item.edits.count()) == ("Who directed Alien?", 1)

    def test_not_a_retirement(self, personas: Personas, item: TestBankItem, rival: APIClient,
                              who: str) -> None:
        client = client_of(personas, who, rival)
        self.assert_not_found(client.delete(ITEM.format(id=item.pk) + "?note=x"),
                              client.delete(ITEM.format(id=item.pk + 1000) + "?note=x"))
        item.refresh_from_db()
        assert item.status == "active"


@pytest.mark.django_db
def test_an_id_past_64_bits_is_a_404_not_a_500(personas: Personas) -> None:
    response = personas.client("organiser").get(ITEM.format(id=2**70))
    assert response.status_code == 404


@pytest.mark.django_db
def test_a_qid_filter_with_a_nul_is_a_400_naming_it(personas: Personas) -> None:
    # PostgreSQL cannot compare text holding NUL: without the check this was a 500 there.
    response = personas.client("organiser").get(BANK.format(slug="toy"), {"qid": "D\x00"})

    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["qid"]
