"""Redis down: no answer is a 500.

In production the cache that keeps the throttles' counts (CACHE_URL) and the Celery
broker and result store (CELERY_BROKER_URL) are Redis. Here both point at a loopback
port where nothing listens, as after a crash of the Redis server. The throttles then
let everyone through (a dead cache must lock no one out); asking for work the workers
do keeps what the request saved and answers that the work could not be queued: a JSON
503 under /api/, a message on the organiser's page.

The tests that queue work commit for real (`transaction=True`): the tasks are sent
once the request's transaction commits, as in production.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django import Settings as SettingsWrapper
from rest_framework.test import APIClient

from campaign.models import TestBankItem, Track
from campaign.testbank import testbank_add as bank_item_add
from config.celery import app as celery_app
from frontend.results.figures import FIGURE_CACHE_DOWN
from grading.models import Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from infrastructure.queueing import QUEUE_DOWN
from infrastructure.throttles import CACHE_DOWN
from submissions.models import Run, RunStatus
from tests.factories import TrackFactory
from tests.grading.judged_rows import judged_answers, judged_run
from tests.security.world import PUBLISHED, build_world, set_phase
from tests.support import REPO, Personas, signed_in

#: A loopback port where nothing listens: every connection is refused.
DEAD_REDIS = "redis://127.0.0.1:6399/0"
PASSWORD = "secret-pass-123"  # tests.factories.UserFactory's
PR_RUN = b"D001;1;Q1;A passage.\n"
HEALTH_TOKEN = "a-monitors-health-token"


@pytest.fixture
def cache_down(settings: SettingsWrapper) -> None:
    """The throttles' cache is a Redis server that is down, with production's options."""
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": DEAD_REDIS,
        "OPTIONS": settings.REDIS_SOCKET_OPTIONS,
    }}


@pytest.fixture
def broker_down(monkeypatch: pytest.MonkeyPatch, settings: SettingsWrapper) -> Iterator[None]:
    """Celery's broker and result store are a Redis server that is down.

    As in production, the result store is the broker's Redis: Celery asks it to follow
    each task before sending it. The app caches its connection pools and its result
    store, so both are dropped on the way in and on the way out.
    """
    down = {"broker_url": DEAD_REDIS, "result_backend": DEAD_REDIS,
            "broker_transport_options": settings.REDIS_SOCKET_OPTIONS}
    before = {name: celery_app.conf.get(name) for name in down}

    def drop_pools() -> None:
        celery_app._pool = None  # type: ignore[attr-defined]
        celery_app.amqp._producer_pool = None  # type: ignore[attr-defined]
        celery_app._backend_cache = None  # type: ignore[attr-defined]
        celery_app._local.__dict__.pop("backend", None)  # type: ignore[attr-defined]

    drop_pools()
    celery_app.conf.update(down)
    # Celery reads this variable before its own settings.
    monkeypatch.setenv("CELERY_BROKER_URL", DEAD_REDIS)
    yield
    celery_app.conf.update(before)
    drop_pools()


def assert_queue_down(response: Any) -> str:
    """A JSON 503 in the API's error shape saying the work was not queued; its detail."""
    assert response.status_code == 503, response.content
    body = response.json()
    assert set(body) == {"detail", "errors"}
    assert body["detail"].startswith(QUEUE_DOWN.split("{", 1)[0])
    assert body["errors"] == [{"field": "", "message": body["detail"]}]
    detail: str = body["detail"]
    return detail


def page_messages(response: Any) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


# --- the throttles' cache ------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.usefixtures("cache_down")
class TestTheCacheDown:
    def test_the_api_still_hands_out_tokens(self, personas: Personas) -> None:
        client = APIClient()

        signed = client.post("/api/v1/auth/token/",
                             {"username": "alice", "password": PASSWORD}, format="json")
        wrong = client.post("/api/v1/auth/token/",
                            {"username": "alice", "password": "wrong"}, format="json")

        assert signed.status_code == 200 and signed.json()["token"]
        assert wrong.status_code == 400

    def test_the_sign_in_page_still_signs_in(self, personas: Personas) -> None:
        client = Client()

        wrong = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
        assert wrong.status_code == 200 and "_auth_user_id" not in client.session
        signed = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})

        assert signed.status_code == 302
        assert client.session["_auth_user_id"] == str(personas.participant_a.pk)

    def test_a_failed_sign_in_logs_the_dead_cache_once(
        self, personas: Personas, caplog: pytest.LogCaptureFixture
    ) -> None:
        # Two throttles, each asked and then told of the failure: four cache calls fail.
        with caplog.at_level(logging.WARNING, logger="infrastructure.throttles"):
            response = APIClient().post("/api/v1/auth/token/",
                                        {"username": "alice", "password": "wrong"},
                                        format="json")

        assert response.status_code == 400
        throttles = [r.msg for r in caplog.records if r.name == "infrastructure.throttles"]
        assert throttles == [CACHE_DOWN]

    def test_the_results_page_still_draws_its_plots(
        self, personas: Personas, toy_ac_run: Run, judge: OpenAIJudge,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        # The plots are cached in the same cache: drawn without it, not a 500.
        set_phase(build_world(personas, toy_ac_run, judge), PUBLISHED)

        with caplog.at_level(logging.WARNING, logger="frontend.results.figures"):
            response = Client().get("/campaigns/toy/results/")

        assert response.status_code == 200
        assert ">R_O against R_U for every AC run</title>" in response.content.decode()
        assert FIGURE_CACHE_DOWN in [r.msg for r in caplog.records]

    def test_a_run_still_uploads_through_the_api(
        self, personas: Personas, tracks: dict[str, Track]
    ) -> None:
        response = personas.client("participant_a").post(
            "/api/v1/campaigns/toy/runs/",
            {"track": "pr", "name": "WASEDA-PG-1",
             "file": SimpleUploadedFile("WASEDA-PG-1", PR_RUN)}, format="multipart")

        assert response.status_code == 201, response.json()
        assert Run.objects.filter(name="WASEDA-PG-1").exists()


# --- the broker ----------------------------------------------------------------------


@pytest.fixture
def pending_ac_run(personas: Personas, tracks: dict[str, Track]) -> Run:
    """An uploaded AC run that grading has not taken yet."""
    team = personas.campaign.teams.get(name="WASEDA")
    return Run.objects.create(track=tracks["ac"], team=team, name="WASEDA-AC-1",
                              sha256="0" * 64, size=0, status=RunStatus.VALID,
                              is_current=True)


@pytest.fixture
def graded_ac_run(personas: Personas, tracks: dict[str, Track]) -> Run:
    run = judged_run(track=tracks["ac"], team=personas.campaign.teams.get(name="WASEDA"),
                     name="WASEDA-AC-1")
    judged_answers(run=run, count=1)
    return run


@pytest.fixture
def graded_bank_item(personas: Personas) -> TestBankItem:
    """A test-bank item of a ranking track whose run is graded: editing it grades it."""
    track = TrackFactory.create(campaign=personas.campaign, slug="dl", kind="ranking")
    Run.objects.create(track=track, team=personas.campaign.teams.get(name="WASEDA"),
                       name="WASEDA-DL-1", sha256="0" * 64, size=0,
                       status=RunStatus.GRADED, is_current=True)
    return bank_item_add(campaign=personas.campaign, user=None, qid="D001",
                        target="questions", text="Who directed Alien?",
                        answers=["Ridley Scott"])


def entailment_of(run: Run) -> Judgment:
    return Judgment.objects.filter(kind="entailment", campaign=run.track.campaign).get()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker_down")
class TestTheBrokerDownUnderTheApi:
    def test_grading_keeps_the_runs_queued_and_says_so(
        self, personas: Personas, pending_ac_run: Run
    ) -> None:
        response = personas.client("organiser").post("/api/v1/campaigns/toy/grading/")

        detail = assert_queue_down(response)
        assert "stay queued" in detail
        pending_ac_run.refresh_from_db()
        assert pending_ac_run.status == RunStatus.QUEUED

    def test_scoring_says_it_was_not_queued(self, personas: Personas) -> None:
        response = personas.client("organiser").post("/api/v1/campaigns/toy/scoring/")

        assert "scoring" in assert_queue_down(response)

    def test_a_judgment_edit_is_saved_and_its_regrading_stays_queued(
        self, personas: Personas, graded_ac_run: Run
    ) -> None:
        judgment = entailment_of(graded_ac_run)

        response = personas.client("organiser").patch(
            f"/api/v1/judgments/{judgment.pk}/",
            {"entailed": False, "note": "the passage says otherwise"}, format="json")

        assert "stay queued" in assert_queue_down(response)
        judgment.refresh_from_db()
        assert judgment.edited_label == {"entailed": False}
        assert JudgmentEdit.objects.filter(judgment=judgment).count() == 1
        graded_ac_run.refresh_from_db()
        assert graded_ac_run.status == RunStatus.QUEUED

    def test_test_bank_drafting_says_it_was_not_queued(self, personas: Personas) -> None:
        response = personas.client("organiser").post(
            "/api/v1/campaigns/toy/testbank/generate/", {"target": "questions", "n": 2},
            format="json")

        assert "drafting" in assert_queue_down(response)

    def test_a_test_bank_edit_is_saved_though_its_grading_was_not_queued(
        self, personas: Personas, graded_bank_item: TestBankItem
    ) -> None:
        response = personas.client("organiser").patch(
            f"/api/v1/testbank/{graded_bank_item.pk}/",
            {"text": "Who directed Alien (1979)?", "note": "the year"}, format="json")

        assert "grading" in assert_queue_down(response)
        graded_bank_item.refresh_from_db()
        assert graded_bank_item.text == "Who directed Alien (1979)?"
        assert graded_bank_item.edits.count() == 2  # added, then edited

    def test_health_names_the_broker_and_the_worker(self, settings: SettingsWrapper) -> None:
        settings.HEALTH_TOKEN = HEALTH_TOKEN

        response = Client(headers={"X-Health-Token": HEALTH_TOKEN}).get("/healthz?worker=1")

        assert response.status_code == 503
        checks = response.json()["checks"]
        assert {name: check["ok"] for name, check in checks.items()} == {
            "database": True, "broker": False, "storage": True, "worker": False}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker_down")
class TestTheBrokerDownOnThePages:
    """The organiser's buttons: back to the page, which says what was not queued."""

    DASHBOARD = "/campaigns/toy/dashboard/"

    def post_from(self, client: Client, page: str, url: str, data: Any = None) -> Any:
        return client.post(url, data or {}, HTTP_REFERER=f"http://testserver{page}")

    def test_grading_keeps_the_runs_queued_and_says_so(
        self, personas: Personas, pending_ac_run: Run
    ) -> None:
        client = signed_in(personas, "organiser")

        response = self.post_from(client, self.DASHBOARD, "/campaigns/toy/dashboard/grade/")

        assert (response.status_code, response["Location"]) == (302, self.DASHBOARD)
        [message] = page_messages(response)
        assert message.startswith(QUEUE_DOWN.split("{", 1)[0]) and "stay queued" in message
        pending_ac_run.refresh_from_db()
        assert pending_ac_run.status == RunStatus.QUEUED

    @pytest.mark.parametrize(("button", "data", "work"), [
        ("score", None, "scoring"),
        ("testbank", {"target": "questions", "n": "2"}, "drafting"),
        ("validate", {"judge": "official"}, "validation"),
    ])
    def test_a_button_says_its_work_was_not_queued(
        self, personas: Personas, button: str, data: Any, work: str
    ) -> None:
        client = signed_in(personas, "organiser")

        response = self.post_from(client, self.DASHBOARD,
                                  f"/campaigns/toy/dashboard/{button}/", data)

        assert (response.status_code, response["Location"]) == (302, self.DASHBOARD)
        [message] = page_messages(response)
        assert message.startswith(QUEUE_DOWN.split("{", 1)[0]) and work in message

    def test_a_judgment_edit_is_saved_and_the_page_says_what_was_not_queued(
        self, personas: Personas, graded_ac_run: Run
    ) -> None:
        judgment = entailment_of(graded_ac_run)
        page = f"/judgments/{judgment.pk}/"
        client = signed_in(personas, "organiser")

        response = self.post_from(client, page, page, {
            "entailed": "false", "reason": "", "note": "the passage says otherwise"})

        assert (response.status_code, response["Location"]) == (302, page)
        [message] = page_messages(response)
        assert "stay queued" in message
        judgment.refresh_from_db()
        assert judgment.edited_label == {"entailed": False}

    def test_a_test_bank_edit_is_saved_and_the_page_says_what_was_not_queued(
        self, personas: Personas, graded_bank_item: TestBankItem
    ) -> None:
        page = f"/campaigns/toy/testbank/{graded_bank_item.pk}/"
        client = signed_in(personas, "organiser")

        response = self.post_from(client, page, page, {
            "text": "Who directed Alien (1979)?", "answers": "Ridley Scott",
            "status": graded_bank_item.status, "note": "the year"})

        assert (response.status_code, response["Location"]) == (302, page)
        [message] = page_messages(response)
        assert "grading" in message
        graded_bank_item.refresh_from_db()
        assert graded_bank_item.text == "Who directed Alien (1979)?"

    def test_without_a_referring_page_the_answer_is_a_503_that_says_why(
        self, personas: Personas
    ) -> None:
        response = signed_in(personas, "organiser").post("/campaigns/toy/dashboard/score/")

        assert response.status_code == 503
        assert "scoring" in response.content.decode()


def test_production_settings_bound_every_wait_on_redis() -> None:
    """With Redis URLs, no call to Redis waits without end, and Celery's retries stop
    after a few tries (its result store's default is twenty, a second apart)."""
    script = ("import django, json; django.setup(); from django.conf import settings as s; "
              "print(json.dumps({'cache': s.CACHES['default'], "
              "'broker': s.CELERY_BROKER_TRANSPORT_OPTIONS, "
              "'results': s.CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS, "
              "'results_socket': [s.CELERY_REDIS_SOCKET_CONNECT_TIMEOUT, "
              "s.CELERY_REDIS_SOCKET_TIMEOUT], "
              "'publish': s.CELERY_TASK_PUBLISH_RETRY_POLICY}))")
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
             "CACHE_URL": DEAD_REDIS, "CELERY_BROKER_URL": DEAD_REDIS})
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)

    sockets = {"socket_connect_timeout", "socket_timeout"}
    assert sockets <= set(seen["cache"]["OPTIONS"])
    assert sockets <= set(seen["broker"])
    for options in (seen["cache"]["OPTIONS"], seen["broker"]):
        assert all(0 < options[name] <= 10 for name in sockets)
    assert all(0 < timeout <= 10 for timeout in seen["results_socket"])
    assert 0 < seen["results"]["retry_policy"]["max_retries"] <= 3
    assert 0 < seen["publish"]["max_retries"] <= 3
