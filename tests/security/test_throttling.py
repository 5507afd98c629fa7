"""Throttles: failed sign-ins per user name and per address, on the
token endpoint and the sign-in form alike, and run uploads per team."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from pytest_django import Settings as SettingsWrapper
from rest_framework.test import APIClient

from campaign.models import Team
from frontend.sign_in import TOO_MANY_FAILED_SIGN_INS as TOO_MANY_FAILED_SIGN_INS_PAGE
from infrastructure.throttles import TOO_MANY_FAILED_SIGN_INS
from submissions.models import Run
from tests.factories import make_member
from tests.support import REPO, Personas, Upload, make_zip, signed_in

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token/"
SIGN_IN = "/accounts/login/"
PASSWORD = "secret-pass-123"  # tests.factories.UserFactory's
RUN = b"D001;1;Q1;A passage.\n"
#: Loopback Redis for the test that runs the throttles on it (skipped where there is none).
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/8")


@pytest.fixture
def rates(settings: SettingsWrapper) -> Any:
    """Set some throttle rates low for one test; the others keep their defaults."""

    def set_rates(**low: str | None) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
                                       **low},
        }

    return set_rates


def token_attempt(username: str, password: str, address: str = "10.0.0.1",
                  **headers: Any) -> Any:
    return APIClient().post(TOKEN, {"username": username, "password": password},
                            format="json", REMOTE_ADDR=address, **headers)


def form_attempt(client: Client, username: str, password: str,
                 address: str = "10.0.0.1") -> Any:
    return client.post(SIGN_IN, {"username": username, "password": password},
                       REMOTE_ADDR=address)


class TestTokenEndpoint:
    def test_wrong_passwords_for_one_user_name_are_throttled_even_from_new_addresses(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_username="3/hour")
        statuses = [token_attempt("alice", "wrong", address=f"10.0.0.{i}").status_code
                    for i in range(1, 4)]
        assert statuses == [400, 400, 400]
        # Now even the right password waits: a guesser cannot tell it was right.
        throttled = token_attempt("alice", PASSWORD, address="10.0.0.9")
        assert throttled.status_code == 429
        assert throttled.json()["detail"].startswith(TOO_MANY_FAILED_SIGN_INS)
        assert 0 < int(throttled["Retry-After"]) <= 3600
        # Other users are not held up by alice's guesser.
        assert token_attempt("bob", PASSWORD, address="10.0.0.1").status_code == 200

    def test_the_user_name_is_matched_whatever_its_case_and_spaces(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_username="2/hour")
        token_attempt("alice", "wrong")
        token_attempt(" ALICE ", "wrong")
        assert token_attempt("Alice", "wrong").status_code == 429

    def test_wrong_passwords_from_one_address_are_throttled_whatever_the_user_name(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_ip="3/hour")
        statuses = [token_attempt(name, "wrong").status_code
                    for name in ("alice", "bob", "olga")]
        assert statuses == [400, 400, 400]
        assert token_attempt("oscar", PASSWORD).status_code == 429
        assert token_attempt("oscar", PASSWORD, address="10.0.0.2").status_code == 200

    def test_a_forged_x_forwarded_for_does_not_escape_the_address_throttle(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_ip="2/hour")
        for forged in ("1.1.1.1", "2.2.2.2"):
            token_attempt("alice", "wrong", HTTP_X_FORWARDED_FOR=forged)
        response = token_attempt("alice", "wrong", HTTP_X_FORWARDED_FOR="3.3.3.3")
        assert response.status_code == 429

    def test_behind_a_proxy_the_address_is_the_one_the_proxy_saw(
        self, personas: Personas, rates: Any, settings: SettingsWrapper
    ) -> None:
        rates(sign_in_ip="2/hour")
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
        proxy = "172.16.0.1"
        for _ in range(2):  # the client forges a first hop; the proxy appends the real one
            token_attempt("alice", "wrong", address=proxy,
                          HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.7")
        assert token_attempt("bob", "wrong", address=proxy,
                             HTTP_X_FORWARDED_FOR="203.0.113.7").status_code == 429
        assert token_attempt("bob", PASSWORD, address=proxy,
                             HTTP_X_FORWARDED_FOR="198.51.100.2").status_code == 200

    def test_only_failures_count(self, personas: Personas, rates: Any) -> None:
        rates(sign_in_username="2/hour", sign_in_ip="2/hour")
        statuses = [token_attempt("alice", PASSWORD).status_code for _ in range(5)]
        assert statuses == [200] * 5

    def test_a_success_forgets_the_users_earlier_typos_but_not_the_addresss(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_username="2/hour", sign_in_ip="3/hour")
        token_attempt("alice", "wrong")
        assert token_attempt("alice", PASSWORD).status_code == 200
        assert token_attempt("alice", "wrong").status_code == 400  # one failure, not two
        # The address has two failures; a third fills it, whoever's account it was.
        assert token_attempt("bob", "wrong").status_code == 400
        assert token_attempt("bob", PASSWORD).status_code == 429

    def test_40_wrong_passwords_in_a_row_are_stopped_at_the_default_rate(
        self, personas: Personas, settings: SettingsWrapper
    ) -> None:
        limit = int(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["sign_in_username"]
                    .split("/")[0])
        statuses = [token_attempt("alice", f"guess-{i}").status_code for i in range(40)]
        assert statuses == [400] * limit + [429] * (40 - limit)

    def test_an_off_rate_throttles_nothing(self, personas: Personas, rates: Any) -> None:
        rates(sign_in_username=None, sign_in_ip=None)
        statuses = {token_attempt("alice", "wrong").status_code for _ in range(15)}
        assert statuses == {400}


class TestSignInForm:
    def test_wrong_passwords_on_the_form_are_throttled_and_the_page_says_when(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_username="3/hour")
        client = Client()
        assert [form_attempt(client, "alice", "wrong").status_code for _ in range(3)] == [200] * 3
        response = form_attempt(client, "alice", PASSWORD)
        assert response.status_code == 429
        assert 0 < int(response["Retry-After"]) <= 3600
        page = response.content.decode()
        assert TOO_MANY_FAILED_SIGN_INS_PAGE.format(minutes=60, plural="s") in page
        assert "_auth_user_id" not in client.session  # the right password did not sign in

    def test_the_form_and_the_token_endpoint_share_their_counts(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_username="3/hour")
        token_attempt("alice", "wrong")
        token_attempt("alice", "wrong")
        client = Client()
        assert form_attempt(client, "alice", "wrong").status_code == 200
        assert form_attempt(client, "alice", PASSWORD).status_code == 429
        assert token_attempt("alice", PASSWORD).status_code == 429

    def test_the_form_throttles_one_address_whatever_the_user_names(
        self, personas: Personas, rates: Any
    ) -> None:
        rates(sign_in_ip="2/hour")
        client = Client()
        form_attempt(client, "alice", "wrong")
        form_attempt(client, "bob", "wrong")
        assert form_attempt(client, "olga", PASSWORD).status_code == 429
        assert form_attempt(Client(), "olga", PASSWORD, address="10.0.0.2").status_code == 302

    def test_a_successful_sign_in_still_signs_in(self, personas: Personas, rates: Any) -> None:
        rates(sign_in_username="1/hour")
        client = Client()
        response = form_attempt(client, "alice", PASSWORD)
        assert response.status_code == 302
        assert "Signed in as alice" in client.get("/").content.decode()


def post_run(client: APIClient, name: str, content: bytes = RUN) -> Any:
    return client.post("/api/v1/campaigns/toy/runs/",
                       {"track": "pr", "name": name, "file": SimpleUploadedFile(name, content)},
                       format="multipart")


class TestUploads:
    def test_uploads_are_throttled_per_team_not_per_member(
        self, personas: Personas, upload: Upload, rates: Any
    ) -> None:
        rates(uploads_team="2/hour")
        team_a = Team.objects.get(campaign=personas.campaign, name="WASEDA")
        amy = APIClient()
        amy.force_authenticate(make_member(personas.campaign, "amy", team_a).user)
        assert upload("participant_a", "WASEDA-PG-1", RUN).status_code == 201
        assert upload("participant_a", "WASEDA-PG-2", b"not a run\n").status_code == 400
        # Invalid or not, each upload counts; amy is of the same team.
        throttled = post_run(amy, "WASEDA-PG-3")
        assert throttled.status_code == 429
        assert throttled["Content-Type"] == "application/json"
        assert set(throttled.json()) >= {"detail", "errors"}
        assert 0 < int(throttled["Retry-After"]) <= 3600
        # Team B has its own count.
        assert upload("participant_b", "KYOTO-PG-1", RUN).status_code == 201

    def test_bulk_uploads_share_the_teams_count(
        self, personas: Personas, upload: Upload, rates: Any
    ) -> None:
        rates(uploads_team="1/hour")
        assert upload("participant_a", "WASEDA-PG-1", RUN).status_code == 201
        response = personas.client("participant_a").post(
            "/api/v1/campaigns/toy/runs/bulk/",
            {"file": SimpleUploadedFile("runs.zip",
                                        make_zip({"WASEDA-PG-2": RUN}))},
            format="multipart")
        assert response.status_code == 429

    def test_reading_the_run_list_is_not_counted(
        self, personas: Personas, upload: Upload, rates: Any
    ) -> None:
        rates(uploads_team="1/hour")
        client = personas.client("participant_a")
        assert {client.get("/api/v1/campaigns/toy/runs/").status_code for _ in range(5)} == {200}
        assert upload("participant_a", "WASEDA-PG-1", RUN).status_code == 201

    def test_an_organiser_is_counted_apart_from_the_teams(
        self, personas: Personas, upload: Upload, rates: Any
    ) -> None:
        rates(uploads_team="1/hour")
        assert upload("organiser", "WASEDA-PG-1", RUN).status_code == 201
        assert upload("organiser", "KYOTO-PG-1", RUN).status_code == 429
        assert upload("participant_a", "WASEDA-PG-2", RUN).status_code == 201


    def test_the_submit_page_shares_the_teams_count_with_the_api(
        self, personas: Personas, upload: Upload, rates: Any
    ) -> None:
        rates(uploads_team="2/hour")
        page = signed_in(personas, "participant_a")

        def through_page(name: str) -> Any:
            return page.post("/campaigns/toy/runs/upload/", {
                "track": "pr", "name": name, "file": SimpleUploadedFile(name, RUN)})

        assert through_page("WASEDA-PG-1").status_code == 302  # stored: to the run's page
        assert upload("participant_a", "WASEDA-PG-2", RUN).status_code == 201
        refused = through_page("WASEDA-PG-3")
        assert refused.status_code == 429
        assert "your team has uploaded as many runs as it may for now" in refused.content.decode()
        assert upload("participant_a", "WASEDA-PG-3", RUN).status_code == 429
        assert not Run.objects.filter(name="WASEDA-PG-3").exists()


class TestSettings:
    def settings_of(self, **env: str) -> dict[str, Any]:
        """CACHES and the throttle rates as config.settings reads them from `env`."""
        script = ("import json; from django.conf import settings; "
                  "print(json.dumps({'caches': settings.CACHES, "
                  "'rates': settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'], "
                  "'proxies': settings.REST_FRAMEWORK['NUM_PROXIES']}))")
        result = subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {script}"],
            cwd=REPO, capture_output=True, text=True, timeout=60,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env})
        assert result.returncode == 0, result.stderr[-2000:]
        loaded: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
        return loaded

    def test_the_embedded_default_counts_in_local_memory_and_production_in_redis(self) -> None:
        embedded = self.settings_of(CACHE_URL="", BEHIND_HTTPS_PROXY="false")
        assert embedded["caches"]["default"]["BACKEND"].endswith("LocMemCache")
        assert embedded["proxies"] == 0
        production = self.settings_of(CACHE_URL="redis://redis:6379/2",
                                      BEHIND_HTTPS_PROXY="true")
        assert production["caches"]["default"] == {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://redis:6379/2",
            # A Redis that does not answer holds no request for long (REDIS_TIMEOUT).
            "OPTIONS": {"socket_connect_timeout": 3.0, "socket_timeout": 3.0}}
        assert production["proxies"] == 1

    def test_rates_come_from_the_environment_and_off_turns_one_off(self) -> None:
        loaded = self.settings_of(THROTTLE_SIGN_IN_USERNAME_RATE="5/minute",
                                  THROTTLE_UPLOADS_TEAM_RATE="off")
        assert loaded["rates"]["sign_in_username"] == "5/minute"
        assert loaded["rates"]["uploads_team"] is None

    def test_a_malformed_rate_stops_the_service_at_start(self) -> None:
        result = subprocess.run(
            [sys.executable, "-c", "import django; django.setup()"], cwd=REPO,
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
                 "THROTTLE_SIGN_IN_IP_RATE": "ten a minute"})
        assert result.returncode != 0
        assert "THROTTLE_SIGN_IN_IP_RATE='ten a minute': expected a rate such as 10/hour" \
            in result.stderr


@pytest.fixture
def redis_cache() -> Iterator[str]:
    """A loopback Redis for the cache, under a key prefix of this test's own; its keys
    are deleted afterwards (no FLUSHDB: the database may be shared)."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"no Redis at {REDIS_URL}")
    prefix = f"test-throttles-{uuid.uuid4().hex}"
    yield prefix
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)


def test_the_throttles_count_in_redis_as_in_production(
    personas: Personas, rates: Any, redis_cache: str
) -> None:
    rates(sign_in_username="2/hour")
    caches = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": REDIS_URL, "KEY_PREFIX": redis_cache}}
    with override_settings(CACHES=caches):
        assert token_attempt("alice", "wrong").status_code == 400
        assert token_attempt("alice", "wrong").status_code == 400
        assert token_attempt("alice", PASSWORD).status_code == 429
    stored = list(redis.Redis.from_url(REDIS_URL).scan_iter(f"{redis_cache}*"))
    assert len(stored) == 2  # one count per user name, one per address
