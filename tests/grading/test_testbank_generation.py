"""Drafting a test bank with the judge: the command, the API and
the dashboard's button. Drafts are audited; a query the judge failed on stores nothing."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from pytest_django import Settings as SettingsWrapper

from campaign.models import BankItemStatus, Question, TestBankEdit, TestBankItem
from grading.llm.prompts import TESTBANK_PROMPT_VERSION
from grading.llm.schemas import TESTBANK_SCHEMA_NAME
from grading.tasks import generate_testbank
from tests.grading.rubric_support import GARBAGE, ScriptedRubric, make_bank, rubric_track
from tests.grading.scripted_server import ScriptedServer, Status
from tests.support import Personas

pytestmark = pytest.mark.django_db

GENERATE = "/api/v1/campaigns/toy/testbank/generate/"
ITEMS: list[dict[str, Any]] = [
    {"text": "Who landed on the far side of the Moon first?", "answers": ["Chang'e 4"]},
    {"text": "When did it land?", "answers": ["2019", "January 2019"]},
]


@pytest.fixture
def rubric(personas: Personas) -> ScriptedRubric:
    """D002 is drafted; D003's reply never parses and D001 has items already."""
    texts = dict(Question.objects.filter(campaign=personas.campaign)
                 .values_list("qid", "text"))
    return ScriptedRubric(banks={texts["D002"]: ITEMS, texts["D003"]: GARBAGE})


@pytest.fixture
def official(rubric: ScriptedRubric, settings: SettingsWrapper) -> Iterator[ScriptedRubric]:
    """The settings' official judge is the scripted one."""
    with ScriptedServer(rubric) as running:
        settings.GRADER_BASE_URL = running.base_url
        settings.GRADER_MODEL = "scripted-judge"
        yield rubric


@pytest.fixture
def campaign_bank(personas: Personas) -> None:
    rubric_track(personas)
    item = make_bank(personas)["cgi"]
    # D002's only item retired: the query has no current item, so it is drafted.
    from campaign import testbank

    testbank.testbank_retire(item=item, user=None, note="too vague")


def drafts(qid: str) -> list[TestBankItem]:
    return list(TestBankItem.objects.filter(question__qid=qid, status=BankItemStatus.DRAFT))


class TestCommand:
    def test_it_drafts_items_for_queries_without_items_and_reports_failures(
        self, personas: Personas, campaign_bank: None, official: ScriptedRubric,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        with pytest.raises(CommandError, match="1 query"):
            call_command("testbank_generate", "toy", "--target", "questions", "--n", "2")

        out, err = capsys.readouterr()
        assert "D002: 2 draft item(s)" in out
        assert "D003: nothing stored: the judge's reply never parsed" in err
        assert "1 query(ies) already have items: D001" in out
        # D001 had items: not asked about. D002 and D003 were.
        # D002 once; D003 three times (the client asks again for a reply that does not parse).
        assert official.count(TESTBANK_SCHEMA_NAME) == 1 + 3
        stored = drafts("D002")
        assert [(i.text, i.answers, i.target, i.created_by) for i in stored] == [
            (ITEMS[0]["text"], ["Chang'e 4"], "questions", None),
            (ITEMS[1]["text"], ["2019", "January 2019"], "questions", None)]
        audit = TestBankEdit.objects.filter(item__in=stored)
        assert {(e.action, e.user, e.note) for e in audit} == {
            ("add", None, f"drafted by the judge scripted-judge with prompt "
                          f"{TESTBANK_PROMPT_VERSION} (2 items asked for)")}
        assert drafts("D003") == []

    def test_nuggets_are_drafted_unless_asked_otherwise(
        self, personas: Personas, campaign_bank: None, official: ScriptedRubric,
    ) -> None:
        # The packaged models draft nuggets far more reliably than exam questions.
        texts = dict(Question.objects.values_list("qid", "text"))
        official.banks[texts["D002"]] = [{"text": "Chang'e 4 landed on the far side."}]
        with pytest.raises(CommandError, match="1 query"):
            call_command("testbank_generate", "toy", "--n", "1")
        assert [(i.text, i.target) for i in drafts("D002")] == [
            ("Chang'e 4 landed on the far side.", "nuggets")]

    def test_a_judge_that_refuses_leaves_no_item(
        self, personas: Personas, campaign_bank: None, official: ScriptedRubric,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        texts = dict(Question.objects.values_list("qid", "text"))
        official.banks[texts["D002"]] = Status(400, "context too long")

        with pytest.raises(CommandError):
            call_command("testbank_generate", "toy", "--target", "nuggets")

        assert "D002: nothing stored: testbank judgment refused by the server (HTTP 400)" in (
            capsys.readouterr().err)
        assert TestBankItem.objects.filter(status=BankItemStatus.DRAFT).count() == 0

    def test_a_refused_item_rolls_back_its_whole_query(
        self, personas: Personas, campaign_bank: None, official: ScriptedRubric,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        texts = dict(Question.objects.values_list("qid", "text"))
        # The second item carries a control character: the test bank refuses it.
        official.banks[texts["D002"]] = [ITEMS[0], {"text": "Bad\x01 item", "answers": []}]
        official.banks[texts["D003"]] = ITEMS

        with pytest.raises(CommandError):
            call_command("testbank_generate", "toy", "--target", "questions", "--n", "2")

        assert "D002: nothing stored: item 2 ('Bad\\x01 item') was refused" in (
            capsys.readouterr().err)
        assert drafts("D002") == []
        assert len(drafts("D003")) == 2

    def test_a_bad_count_is_refused_before_any_call(
        self, personas: Personas, campaign_bank: None, official: ScriptedRubric,
    ) -> None:
        with pytest.raises(CommandError, match="--n"):
            call_command("testbank_generate", "toy", "--n", "31")
        assert official.count(TESTBANK_SCHEMA_NAME) == 0


class TestApi:
    def test_an_organiser_queues_generation_and_the_task_drafts_as_them(
        self, personas: Personas, campaign_bank: None, official: ScriptedRubric,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client("organiser").post(
                GENERATE, {"target": "questions", "n": 2}, format="json")

        assert response.status_code == 202, response.json()
        assert response.json()["task"]
        assert len(queued) == 1
        # What the worker runs, here in-process.
        result = generate_testbank(personas.campaign.pk, "questions", 2, personas.organiser.pk)

        assert result["drafted"] == {"D002": 2}
        assert result["failed"]["D003"].startswith("the judge's reply never parsed")
        assert {i.created_by for i in drafts("D002")} == {personas.organiser}

    def test_nuggets_are_the_default_target(
        self, personas: Personas, campaign_bank: None,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client("organiser").post(GENERATE, {"n": 2}, format="json")
        assert response.status_code == 202, response.json()
        assert response.json()["detail"] == "drafting 2 nuggets per query without items"
        assert len(queued) == 1

    @pytest.mark.parametrize(("body", "field"), [({"n": 0}, "n"), ({"n": 31}, "n"),
                                                 ({"target": "exams"}, "target")])
    def test_bad_parameters_are_named(
        self, personas: Personas, campaign_bank: None, body: dict[str, Any], field: str,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client("organiser").post(GENERATE, body, format="json")
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == [field]
        assert queued == []

    @pytest.mark.parametrize("who", ["participant_a", "outsider", "anonymous"])
    def test_no_one_else_finds_it(
        self, personas: Personas, campaign_bank: None, who: str,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = personas.client(who).post(GENERATE, {"n": 2}, format="json")
        assert response.status_code == 404
        assert response.json()["detail"] == "No such test bank."
        assert queued == []


class TestDashboardButton:
    def test_the_organiser_drafts_from_the_dashboard(
        self, personas: Personas, campaign_bank: None, client: Any,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        client.force_login(personas.organiser)
        page = client.get("/campaigns/toy/dashboard/")
        assert b'id="testbank-generate"' in page.content

        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = client.post("/campaigns/toy/dashboard/testbank/",
                                   {"n": "3", "target": "nuggets"}, follow=True)

        assert len(queued) == 1
        assert b"Drafting 3 nuggets per query without test-bank items" in response.content

    def test_the_form_offers_nuggets_first_and_chosen(
        self, personas: Personas, campaign_bank: None, client: Any,
    ) -> None:
        client.force_login(personas.organiser)
        page = client.get("/campaigns/toy/dashboard/").content.decode()
        form = page[page.index('id="testbank-generate"'):]
        options = re.findall(r'<option value="(\w+)"( selected)?>', form[:form.index("</form>")])
        assert options == [("nuggets", " selected"), ("questions", "")]

    def test_a_participant_finds_no_button(
        self, personas: Personas, campaign_bank: None, client: Any,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        client.force_login(personas.participant_a)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = client.post("/campaigns/toy/dashboard/testbank/", {"n": "3"})
        assert response.status_code == 404
        assert queued == []
