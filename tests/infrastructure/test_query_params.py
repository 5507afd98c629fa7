"""Yes/no query parameters are read one way everywhere, and a word none of them knows is a
400 naming the parameter, never a guess (infrastructure/query_params.py)."""

from __future__ import annotations

import pytest
from django.test import Client

from infrastructure.query_params import BAD_FLAG, parse_flag
from tests.support import Personas

MAYBE = BAD_FLAG.format(value="maybe")


@pytest.mark.parametrize(("word", "flag"), [
    ("1", True), ("true", True), ("True", True), ("yes", True), ("on", True),
    ("0", False), ("false", False), ("FALSE", False), ("no", False), ("off", False),
    ("", None), (None, None),
])
def test_it_reads_the_words_the_settings_read(word: str | None, flag: bool | None) -> None:
    assert parse_flag(word) is flag


@pytest.mark.parametrize("word", ["maybe", "2", "tru", "yes please"])
def test_it_refuses_any_other_word(word: str) -> None:
    with pytest.raises(ValueError, match="expected true or false"):
        parse_flag(word)


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path", "name"), [
    ("get", "/api/v1/campaigns/toy/runs/?shared=maybe", "shared"),
    ("get", "/api/v1/campaigns/toy/runs/?current=maybe", "current"),
    ("post", "/api/v1/campaigns/toy/grading/?all=maybe", "all"),
    ("get", "/api/v1/campaigns/toy/judgments/?edited=maybe", "edited"),
])
def test_the_api_answers_400_naming_the_parameter(
    personas: Personas, method: str, path: str, name: str
) -> None:
    response = getattr(personas.client("organiser"), method)(path)
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": name, "message": MAYBE}]


@pytest.mark.django_db
def test_the_runs_list_still_reads_current_as_before(personas: Personas) -> None:
    response = personas.client("organiser").get("/api/v1/campaigns/toy/runs/?current=1")
    assert response.status_code == 200 and response.json() == []


@pytest.mark.django_db
def test_the_health_check_answers_400_naming_the_parameter() -> None:
    response = Client().get("/healthz?worker=maybe")
    assert response.status_code == 400
    assert response.json() == {"detail": f"worker: {MAYBE}",
                               "errors": [{"field": "worker", "message": MAYBE}]}
