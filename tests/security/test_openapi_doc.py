"""The OpenAPI document says what the API does.

Reproduced before the fix: the questions endpoint documented the organisers' shape (with
gold answers) for everyone; PATCH of a judgment did not mark `note` required (the view
refuses a body without one); error statuses were missing from most operations. And a
yes/no query parameter must refuse a word like `null` with a 400 naming it, never read
it as "not given".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # drf-spectacular needs it; no hints
import pytest
from rest_framework.test import APIClient

from campaign.models import GoldAnswer
from grading.agreement.samples import blind_sample_draw
from grading.openai_judge import OpenAIJudge
from infrastructure.query_params import BAD_FLAG, parse_flag
from submissions.models import Run
from tests.security.world import PR_SHARED, World, build_world, set_phase
from tests.support import Personas

pytestmark = pytest.mark.django_db

QUESTIONS = "/api/v1/campaigns/{slug}/questions/"
JUDGMENT = "/api/v1/judgments/{judgment_id}/"
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def document() -> dict[str, Any]:
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return dict(response.json())


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    world = build_world(personas, toy_ac_run, judge)
    set_phase(world, PR_SHARED)
    sample = blind_sample_draw(campaign=personas.campaign, kind="entailment", size=1,
                               user=personas.organiser)
    world.ids["blind_sample"] = sample.pk
    world.ids["blind_item"] = sample.items.get().pk
    return world


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


def validator(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A JSON Schema validator of `schema`, its $refs resolved in the document."""
    return jsonschema.Draft4Validator({**schema, "components": document["components"]})


def component(document: dict[str, Any], ref: str) -> dict[str, Any]:
    schema: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return schema


def path_values(world: World) -> dict[str, Any]:
    """A value of the world for each path parameter of the document."""
    return {"slug": "toy", "run_id": world.ids["own_ac"], "judgment_id": world.ids["judgment"],
            "item_id": world.ids["bank_item"], "track": "ac", "name": "res.zip",
            "sample_id": world.ids["blind_sample"], "blind_item_id": world.ids["blind_item"]}


def _has_the_error_shape(document: dict[str, Any], response: dict[str, Any],
                         api_error: dict[str, Any]) -> bool:
    ref = response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
    if ref is None:
        return False
    shape = component(document, ref)
    return (set(shape.get("required", [])) >= {"detail", "errors"}
            and all(shape["properties"][name]["type"] == api_error["properties"][name]["type"]
                    for name in ("detail", "errors")))


class TestQuestions:
    def test_the_document_has_one_shape_whose_gold_answers_are_for_organisers_only(
        self, document: dict[str, Any]
    ) -> None:
        ok = document["paths"][QUESTIONS]["get"]["responses"]["200"]
        media = ok["content"]["application/json"]
        question = component(document, media["schema"]["items"]["$ref"])

        assert "gold_answers" in question["properties"]
        assert "gold_answers" not in question["required"]
        assert "organisers only" in question["properties"]["gold_answers"]["description"]
        # Both shapes shown, as each role gets them.
        shapes = {name: example["value"][0] for name, example in media["examples"].items()}
        assert {"gold_answers" in shape for shape in shapes.values()} == {True, False}

    @pytest.mark.parametrize("who", ["organiser", "own"])
    def test_what_each_role_gets_is_what_the_document_says(
        self, document: dict[str, Any], world: World, who: str
    ) -> None:
        GoldAnswer.objects.create(question=world.personas.campaign.questions.get(qid="D001"),
                                  text="Chang'e 4")
        media = document["paths"][QUESTIONS]["get"]["responses"]["200"]["content"]

        response = world.client(who).get("/api/v1/campaigns/toy/questions/")

        assert response.status_code == 200
        validator(document, media["application/json"]["schema"]).validate(response.json())
        first = response.json()[0]
        assert ("gold_answers" in first) is (who == "organiser")


class TestJudgmentEdit:
    def test_note_is_required_as_the_view_requires_it(
        self, document: dict[str, Any], world: World
    ) -> None:
        body = document["paths"][JUDGMENT]["patch"]["requestBody"]
        edit = component(document, body["content"]["application/json"]["schema"]["$ref"])

        assert body["required"] is True
        assert edit["required"] == ["note"]
        response = world.client("organiser").patch(
            f"/api/v1/judgments/{world.ids['judgment']}/", {"entailed": False}, format="json")
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == ["note"]

    def test_the_test_bank_edit_also_requires_its_note(self, document: dict[str, Any]) -> None:
        body = document["paths"]["/api/v1/testbank/{item_id}/"]["patch"]["requestBody"]
        edit = component(document, body["content"]["application/json"]["schema"]["$ref"])

        assert edit["required"] == ["note"]


class TestFlags:
    @pytest.mark.parametrize("word", ["null", "None", "nil", "maybe", "2"])
    def test_a_word_that_is_not_yes_or_no_is_refused(self, word: str) -> None:
        with pytest.raises(ValueError, match=BAD_FLAG.format(value=word).replace("?", r"\?")):
            parse_flag(word)

    @pytest.mark.parametrize("word", ["", "  "])
    def test_an_empty_value_is_not_given(self, word: str) -> None:
        assert parse_flag(word) is None

    def test_shared_null_is_a_400_naming_shared(self, world: World) -> None:
        response = world.client("own").get("/api/v1/campaigns/toy/runs/?shared=null")

        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "shared", "message": BAD_FLAG.format(value="null")}]

    def test_every_yes_no_query_parameter_of_the_document_refuses_null(
        self, document: dict[str, Any], world: World
    ) -> None:
        client = world.client("organiser")
        refused: dict[str, list[str]] = {}
        flags = 0
        for method, path, operation in operations(document):
            for parameter in operation.get("parameters", []):
                if parameter["in"] != "query" or parameter["schema"].get("type") != "boolean":
                    continue
                flags += 1
                url = path.format(slug="toy") + f"?{parameter['name']}=null"
                response = getattr(client, method)(url)
                fields = ([e.get("field") for e in response.json().get("errors", [])]
                          if response["Content-Type"] == "application/json" else [])
                refused[f"{method.upper()} {path}?{parameter['name']}"] = [
                    str(response.status_code), *fields]
        assert flags >= 7  # shared, current, all, edited, needs_review, disagreement, doubtful
        assert refused == {name: ["400", name.rsplit("?", 1)[1]] for name in refused}


class TestErrorStatuses:
    def test_each_operation_lists_401_and_a_404_where_it_names_something(
        self, document: dict[str, Any]
    ) -> None:
        missing: dict[str, list[str]] = {}
        for method, path, operation in operations(document):
            label = f"{method.upper()} {path}"
            wanted = ["401"] + (["404"] if "{" in path else [])
            absent = [status for status in wanted if status not in operation["responses"]]
            if absent:
                missing[label] = absent
        assert missing == {}

    def test_every_operation_that_queues_work_documents_the_503_of_a_queue_down(
        self, document: dict[str, Any]
    ) -> None:
        # The operations tests/security/test_broker_down.py sees answer 503 with Redis down.
        queueing = {
            "POST /api/v1/campaigns/{slug}/grading/", "POST /api/v1/campaigns/{slug}/scoring/",
            "PATCH /api/v1/judgments/{judgment_id}/",
            "POST /api/v1/judgments/{judgment_id}/confirm/",
            "POST /api/v1/campaigns/{slug}/testbank/", "PATCH /api/v1/testbank/{item_id}/",
            "DELETE /api/v1/testbank/{item_id}/",
            "POST /api/v1/campaigns/{slug}/testbank/generate/",
        }
        documented = {f"{method.upper()} {path}" for method, path, operation
                      in operations(document) if "503" in operation["responses"]}
        assert sorted(queueing - documented) == []

    def test_every_documented_error_has_the_api_error_shape(
        self, document: dict[str, Any]
    ) -> None:
        """ApiError, or a shape of its own that holds detail and errors as ApiError does
        (a refused publication's problems, a bulk upload's results)."""
        api_error = component(document, "#/components/schemas/ApiError")
        shapeless = []
        for method, path, operation in operations(document):
            for status, response in operation["responses"].items():
                if status.startswith("4") and not _has_the_error_shape(
                        document, response, api_error):
                    shapeless.append(f"{method.upper()} {path} {status}")
        assert shapeless == []

    def test_a_bad_token_is_the_documented_401_on_every_read(
        self, document: dict[str, Any], world: World
    ) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
        answers = {}
        for method, path, operation in operations(document):
            if method != "get":
                continue
            response = client.get(path.format(**path_values(world)))
            error = operation["responses"]["401"]["content"]["application/json"]["schema"]
            validator(document, error).validate(response.json())
            answers[path] = response.status_code
        assert set(answers.values()) == {401}

    def test_a_body_without_a_content_type_is_the_documented_415_wherever_one_is_read(
        self, document: dict[str, Any], world: World
    ) -> None:
        """What schemathesis sends as a raw multipart payload: DRF finds no parser for it."""
        client = world.client("organiser")
        answers = {}
        for method, path, operation in operations(document):
            if "requestBody" not in operation:
                continue
            response = client.generic(method.upper(), path.format(**path_values(world)),
                                      data="username=olga", content_type="")
            label = f"{method.upper()} {path}"
            answers[label] = [response.status_code, "415" in operation["responses"]]
            assert response.json()["detail"] == 'Unsupported media type "" in request.'
        assert len(answers) >= 8  # the token, uploads, the bank's writes, edits, publishing
        assert answers == {label: [415, True] for label in answers}
