"""Every response under /api/ is JSON in the `{"detail", "errors"}` shape, whatever the cause
(docs/api.md), and API keys are taken as Token or Bearer."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.core.exceptions import SuspiciousFileOperation
from django.test import Client, RequestFactory
from django.views.csrf import csrf_failure
from pytest_django import Settings as SettingsWrapper
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaign.api import CampaignListView
from infrastructure.authentication import NO_KEY
from infrastructure.middleware import (
    BAD_REQUEST,
    FORBIDDEN,
    REQUEST_TOO_LARGE,
    SERVER_ERROR,
    SUSPICIOUS,
    ApiErrorsMiddleware,
)
from infrastructure.negotiation import UNKNOWN_FORMAT
from infrastructure.throttles import TOO_MANY_FAILED_SIGN_INS
from tests.support import Personas

pytestmark = pytest.mark.django_db

TWELVE_MB = 12 * 1024 * 1024


def assert_json_error(response: Any, status: int) -> dict[str, Any]:
    """The response is `status`, JSON, and in the API's error shape; its body."""
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body: dict[str, Any] = json.loads(response.content)
    assert set(body) >= {"detail", "errors"}
    assert isinstance(body["detail"], str) and body["detail"]
    assert isinstance(body["errors"], list)
    return body


def session_client(personas: Personas, who: str) -> APIClient:
    """A browser-like client: signed in with a session cookie, CSRF checks enforced."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(getattr(personas, who))
    return client


class TestUnknownPaths:
    @pytest.mark.parametrize("method", ["get", "post", "patch", "put", "delete"])
    def test_an_unknown_v1_path_is_a_json_404_for_a_signed_in_browser_not_a_csrf_403(
        self, personas: Personas, method: str
    ) -> None:
        response = getattr(session_client(personas, "participant_a"), method)(
            "/api/v1/nothing/here/", {"a": 1}, format="json")
        body = assert_json_error(response, 404)
        assert body["detail"] == "No API endpoint at /api/v1/nothing/here/."

    @pytest.mark.parametrize("method", ["get", "post"])
    def test_an_unknown_path_outside_v1_is_a_json_404(self, method: str) -> None:
        response = getattr(APIClient(), method)("/api/nothing")
        body = assert_json_error(response, 404)
        assert body["detail"] == "No API endpoint at /api/nothing."

    def test_pages_outside_the_api_keep_their_html_404(self) -> None:
        response = Client().get("/no/such/page/")
        assert response.status_code == 404
        assert response["Content-Type"].startswith("text/html")


class TestMethodsAndBodies:
    def test_a_wrong_method_is_a_json_405_that_names_the_allowed_ones(
        self, personas: Personas
    ) -> None:
        response = personas.client("organiser").put("/api/v1/campaigns/", {}, format="json")
        body = assert_json_error(response, 405)
        assert body["detail"] == 'Method "PUT" not allowed.'
        assert "GET" in response["Allow"]

    @pytest.mark.parametrize(
        ("who", "method", "path"),
        [
            ("anonymous", "post", "/api/v1/auth/token/"),
            ("organiser", "post", "/api/v1/campaigns/toy/leaderboards/pr/publish/"),
        ],
    )
    def test_a_12_mb_json_body_is_a_json_413_and_logs_no_traceback(
        self, personas: Personas, caplog: pytest.LogCaptureFixture, who: str, method: str,
        path: str, settings: SettingsWrapper,
    ) -> None:
        body = json.dumps({"username": "alice", "note": "x" * TWELVE_MB})
        with caplog.at_level(logging.INFO):
            response = getattr(personas.client(who), method)(
                path, body, content_type="application/json")
        shaped = assert_json_error(response, 413)
        assert shaped["detail"] == REQUEST_TOO_LARGE.format(
            limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        assert [r for r in caplog.records if r.exc_info] == []
        assert any(r.name == "django.security.RequestDataTooBig" for r in caplog.records)

    def test_an_oversized_form_field_of_an_upload_is_a_json_413(
        self, personas: Personas, caplog: pytest.LogCaptureFixture, upload: Any
    ) -> None:
        with caplog.at_level(logging.INFO):
            response = upload("participant_a", "WASEDA-PG-1", b"Q01;1;d;text\n",
                              description="x" * TWELVE_MB)
        assert_json_error(response, 413)
        assert [r for r in caplog.records if r.exc_info] == []

    def test_too_many_form_fields_is_a_json_400(self, personas: Personas,
                                                settings: SettingsWrapper) -> None:
        settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
        fields = "&".join(f"f{i}=1" for i in range(20))
        response = APIClient().post("/api/v1/auth/token/", fields,
                                    content_type="application/x-www-form-urlencoded")
        body = assert_json_error(response, 400)
        assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in body["detail"]

    def test_a_malformed_json_body_is_a_json_400(self) -> None:
        response = APIClient().post("/api/v1/auth/token/", "{not json",
                                    content_type="application/json")
        body = assert_json_error(response, 400)
        assert body["detail"].startswith("JSON parse error")

    def test_a_disallowed_host_is_a_json_400(self) -> None:
        response = APIClient().get("/api/v1/campaigns/", HTTP_HOST="attacker.example")
        assert_json_error(response, 400)

    def test_a_suspicious_operation_in_a_view_is_a_json_400_that_names_no_server_path(
        self, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        def traversal(*args: object, **kwargs: object) -> None:
            raise SuspiciousFileOperation("/srv/evalservice/media/../etc is outside the base")

        monkeypatch.setattr(CampaignListView, "get", traversal)
        response = APIClient().get("/api/v1/campaigns/")
        body = assert_json_error(response, 400)
        assert body["detail"] == BAD_REQUEST.format(reason=SUSPICIOUS)
        assert "/srv/" not in response.content.decode()
        assert [r for r in caplog.records if r.exc_info] == []

    def test_a_bug_in_a_view_is_a_json_500_and_is_still_logged(
        self, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(CampaignListView, "get", broken)
        client = APIClient(raise_request_exception=False)
        response = client.get("/api/v1/campaigns/")
        body = assert_json_error(response, 500)
        assert body["detail"] == SERVER_ERROR
        assert "a bug" not in response.content.decode()  # no exception text to the client
        assert any(r.exc_info and "a bug" in str(r.exc_info[1]) for r in caplog.records)


class TestThrottledCsrfAndNegotiation:
    def test_a_throttled_request_is_a_json_429_with_retry_after(
        self, personas: Personas, settings: SettingsWrapper
    ) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
                                       "sign_in_username": "1/hour"},
        }
        client = APIClient()
        wrong = {"username": "alice", "password": "wrong"}
        assert client.post("/api/v1/auth/token/", wrong, format="json").status_code == 400
        response = client.post("/api/v1/auth/token/", wrong, format="json")
        body = assert_json_error(response, 429)
        assert body["detail"].startswith(TOO_MANY_FAILED_SIGN_INS)
        assert 3500 <= int(response["Retry-After"]) <= 3600

    def test_a_session_api_post_without_csrf_token_is_a_json_403(
        self, personas: Personas
    ) -> None:
        response = session_client(personas, "organiser").post(
            "/api/v1/campaigns/toy/scoring/", {}, format="json")
        body = assert_json_error(response, 403)
        assert body["detail"].startswith("CSRF Failed")

    def test_a_csrf_page_from_django_itself_becomes_json(self, rf: RequestFactory) -> None:
        # No API path reaches Django's own CSRF check today (the catch-all is exempt, DRF
        # checks on its own); should one ever, its HTML 403 is rewritten all the same.
        request = rf.post("/api/v1/anything/")
        page = csrf_failure(request, reason="CSRF cookie not set.")
        assert page["Content-Type"].startswith("text/html")
        response = ApiErrorsMiddleware(lambda r: page)(request)
        body = assert_json_error(response, 403)
        assert body["detail"] == FORBIDDEN

    def test_an_accept_header_the_endpoint_cannot_meet_gets_its_first_format(self) -> None:
        # RFC 9110 lets a server ignore Accept: the endpoint's JSON is the useful answer.
        response = APIClient().get("/api/v1/campaigns/", HTTP_ACCEPT="application/xml")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"

    def test_an_unknown_format_is_a_json_406_naming_the_formats(self) -> None:
        response = APIClient().get("/api/v1/campaigns/?format=xml")
        body = assert_json_error(response, 406)
        assert body["detail"] == UNKNOWN_FORMAT.format(format="xml", formats="json")

    def test_format_csv_wins_over_an_accept_json_header(self, personas: Personas) -> None:
        response = personas.client("organiser").get(
            "/api/v1/campaigns/toy/leaderboards/?format=csv", HTTP_ACCEPT="application/json")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/csv")

    def test_without_format_the_accept_header_still_chooses(self, personas: Personas) -> None:
        client = personas.client("organiser")
        as_csv = client.get("/api/v1/campaigns/toy/leaderboards/", HTTP_ACCEPT="text/csv")
        as_json = client.get("/api/v1/campaigns/toy/leaderboards/",
                             HTTP_ACCEPT="application/json")
        assert as_csv["Content-Type"].startswith("text/csv")
        assert as_json.json() == {"leaderboards": []}

    def test_an_error_for_a_browser_is_json_too_not_the_browsable_api(
        self, personas: Personas
    ) -> None:
        response = personas.client("participant_a").get(
            "/api/v1/runs/999999/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
        assert_json_error(response, 404)

    @pytest.mark.parametrize("accept", ["text/html", "text/html,application/xhtml+xml,*/*;q=0.8",
                                        "garbage", "image/png"])
    def test_a_success_is_json_whatever_the_accept_header_asks(
        self, personas: Personas, accept: str
    ) -> None:
        # Everything under /api/ is JSON: no browsable HTML API, no 406 for an Accept
        # header that names no format of the endpoint (its first one answers).
        response = personas.client("organiser").get("/api/v1/campaigns/", HTTP_ACCEPT=accept)
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/json")
        assert response.json()[0]["slug"] == "toy"

    def test_a_file_endpoint_answers_its_first_format_to_an_accept_it_lacks(
        self, personas: Personas
    ) -> None:
        response = personas.client("organiser").get("/api/v1/campaigns/toy/leaderboards/",
                                                    HTTP_ACCEPT="image/png")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/json")


class TestBearer:
    def key(self, personas: Personas, who: str) -> str:
        token, _ = Token.objects.get_or_create(user=getattr(personas, who))
        return token.key

    @pytest.mark.parametrize("keyword", ["Bearer", "bearer", "Token"])
    def test_a_key_is_accepted_after_bearer_as_after_token(
        self, personas: Personas, keyword: str
    ) -> None:
        response = APIClient().get(
            "/api/v1/campaigns/toy/",
            HTTP_AUTHORIZATION=f"{keyword} {self.key(personas, 'participant_a')}")
        assert response.status_code == 200
        assert response.json()["role"] == "participant"
        assert response.json()["team"] == "WASEDA"

    def test_a_bad_bearer_key_is_a_json_401_saying_the_token_is_invalid(self) -> None:
        response = APIClient().get("/api/v1/campaigns/toy/runs/",
                                   HTTP_AUTHORIZATION="Bearer not-a-real-key")
        body = assert_json_error(response, 401)
        assert body["detail"] == "Invalid token."
        assert response["WWW-Authenticate"] == "Bearer"

    def test_a_bearer_header_without_a_key_says_so(self) -> None:
        response = APIClient().get("/api/v1/campaigns/toy/runs/", HTTP_AUTHORIZATION="Bearer")
        body = assert_json_error(response, 401)
        assert body["detail"] == NO_KEY.format(keyword="Bearer")

    def test_no_credentials_is_a_401_asking_for_a_token(self) -> None:
        response = APIClient().get("/api/v1/campaigns/toy/runs/")
        body = assert_json_error(response, 401)
        assert body["detail"] == "Authentication credentials were not provided."
        assert response["WWW-Authenticate"] == "Token"

    def test_the_openapi_document_offers_both_schemes(self) -> None:
        response = APIClient().get("/api/schema/",
                                   HTTP_ACCEPT="application/vnd.oai.openapi+json")
        document = response.json()
        schemes = document["components"]["securitySchemes"]
        assert schemes["bearerAuth"] == {"type": "http", "scheme": "bearer"}
        assert schemes["tokenAuth"]["type"] == "apiKey"
        assert schemes["tokenAuth"]["name"] == "Authorization"
        runs = document["paths"]["/api/v1/campaigns/{slug}/runs/"]["post"]
        # Either is enough: two requirements, not one that names both.
        assert {"tokenAuth": []} in runs["security"] and {"bearerAuth": []} in runs["security"]
