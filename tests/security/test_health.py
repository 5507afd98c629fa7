"""`/healthz` for the public is cheap and side-effect free: the database answers or not,
no write, no wait for a worker, no exception text. The deep checks (broker, storage,
?worker=1) are for a monitor with the health token, or a signed-in organiser or staff."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings as SettingsWrapper

from config import health
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

TOKEN = "a-monitors-health-token-0123456789"
ALIVE = {"status": "ok", "detail": health.ALIVE, "checks": {"database": {"ok": True}}}
# What a broken database says in its exception: the public must not read it.
LEAK = 'connection to server at "10.0.0.5", port 5432 failed: password authentication failed'


@pytest.fixture(autouse=True)
def health_token(settings: SettingsWrapper) -> None:
    settings.HEALTH_TOKEN = TOKEN


@pytest.fixture
def deep_checks_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The deep checks that ran (each still runs for real)."""
    made: list[str] = []
    for name in ("broker", "storage", "worker"):
        real: Callable[[], str] = getattr(health, f"check_{name}")

        def spy(real: Callable[[], str] = real, name: str = name) -> str:
            made.append(name)
            return real()

        monkeypatch.setattr(health, f"check_{name}", spy)
    return made


@pytest.fixture
def broken_database(monkeypatch: pytest.MonkeyPatch) -> None:
    def check_database() -> str:
        raise RuntimeError(LEAK)

    monkeypatch.setattr(health, "check_database", check_database)


class TestAnonymous:
    def test_it_gets_the_liveness_answer_and_nothing_else(
        self, deep_checks_made: list[str], media_in_tmp: Path
    ) -> None:
        response = Client().get("/healthz")

        assert response.status_code == 200
        assert response.json() == ALIVE
        assert deep_checks_made == []
        # No storage write: the deep check leaves an emptied healthz/ folder behind.
        assert not (media_in_tmp / "healthz").exists()

    def test_asking_for_the_worker_sends_nothing_through_the_queue(
        self, deep_checks_made: list[str]
    ) -> None:
        response = Client().get("/healthz?worker=1")

        assert (response.status_code, response.json()) == (200, ALIVE)
        assert deep_checks_made == []

    @pytest.mark.parametrize("header", ["a-wrong-token", "", TOKEN.upper()])
    def test_a_wrong_token_gets_the_public_answer(
        self, header: str, deep_checks_made: list[str]
    ) -> None:
        response = Client(headers={"X-Health-Token": header}).get("/healthz")

        assert response.json() == ALIVE
        assert deep_checks_made == []

    def test_with_no_token_set_no_header_opens_the_deep_checks(
        self, settings: SettingsWrapper, deep_checks_made: list[str]
    ) -> None:
        settings.HEALTH_TOKEN = ""

        response = Client(headers={"X-Health-Token": ""}).get("/healthz")

        assert response.json() == ALIVE
        assert deep_checks_made == []

    def test_a_failing_database_is_named_without_its_exception_text(
        self, broken_database: None, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING, logger="config.health"):
            response = Client().get("/healthz")

        assert response.status_code == 503
        assert response.json() == {"status": "unavailable", "detail": "failing: database",
                                   "checks": {"database": {"ok": False}}}
        assert "10.0.0.5" not in response.content.decode()
        # The text is in the log, for those who run the service.
        assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == [LEAK]


def deep(response_json: dict[str, object]) -> set[str]:
    checks = response_json["checks"]
    assert isinstance(checks, dict)
    return set(checks)


class TestTheDeepChecks:
    def test_a_monitor_with_the_token_gets_every_check_with_its_detail(
        self, deep_checks_made: list[str], media_in_tmp: Path
    ) -> None:
        response = Client(headers={"X-Health-Token": TOKEN}).get("/healthz")

        assert response.status_code == 200
        body = response.json()
        assert (body["status"], body["detail"]) == ("ok", health.ALL_PASSED)
        assert deep(body) == {"database", "broker", "storage"}
        assert body["checks"]["storage"]["detail"] == "FileSystemStorage"
        assert deep_checks_made == ["broker", "storage"]
        assert list((media_in_tmp / "healthz").iterdir()) == []  # written, then deleted

    @pytest.mark.parametrize("who", ["organiser", "staff"])
    def test_an_organiser_or_staff_signed_in_gets_them(
        self, personas: Personas, who: str, deep_checks_made: list[str]
    ) -> None:
        if who == "staff":
            client = Client()
            client.force_login(User.objects.create(username="sam", is_staff=True))
        else:
            client = signed_in(personas, who)

        response = client.get("/healthz")

        assert deep(response.json()) == {"database", "broker", "storage"}
        assert deep_checks_made == ["broker", "storage"]

    @pytest.mark.parametrize("who", ["participant_a", "outsider"])
    def test_a_participant_or_outsider_gets_the_public_answer(
        self, personas: Personas, who: str, deep_checks_made: list[str]
    ) -> None:
        response = signed_in(personas, who).get("/healthz?worker=1")

        assert response.json() == ALIVE
        assert deep_checks_made == []

    def test_they_see_why_a_check_fails(self, broken_database: None) -> None:
        response = Client(headers={"X-Health-Token": TOKEN}).get("/healthz")

        assert response.status_code == 503
        assert response.json()["checks"]["database"]["detail"] == f"RuntimeError: {LEAK}"
