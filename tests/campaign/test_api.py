"""Campaigns and questions through the REST API, for every persona."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaign.models import GoldAnswer
from submissions.formats.upload_window import campaign_time
from tests.factories import UserFactory
from tests.support import Personas

PERSONAS = ["organiser", "participant_a", "participant_b", "outsider", "anonymous"]


def questions_url(personas: Personas) -> str:
    return f"/api/v1/campaigns/{personas.campaign.slug}/questions/"


def move_phases(personas: Personas, *, topics_in: timedelta, results_in: timedelta) -> None:
    campaign = personas.campaign
    now = timezone.now()
    campaign.topics_release = now + topics_in
    campaign.results_release = now + results_in
    step = (campaign.results_release - campaign.topics_release) / 3
    campaign.pr_due = campaign.topics_release + step
    campaign.ac_due = campaign.pr_due + step
    campaign.full_clean()
    campaign.save()


@pytest.mark.django_db
class TestTokenAuth:
    def test_a_user_gets_a_token_with_username_and_password(self) -> None:
        user = UserFactory.create(username="alice")
        response = APIClient().post(
            "/api/v1/auth/token/", {"username": "alice", "password": "secret-pass-123"},
            format="json",
        )
        assert response.status_code == 200
        assert response.json() == {"token": Token.objects.get(user=user).key}

    def test_a_wrong_password_gets_a_400_in_the_error_shape(self) -> None:
        UserFactory.create(username="alice")
        response = APIClient().post(
            "/api/v1/auth/token/", {"username": "alice", "password": "nope"}, format="json"
        )
        assert response.status_code == 400
        assert response.json() == {
            "detail": "Unable to log in with provided credentials.",
            "errors": [{"field": "", "message": "Unable to log in with provided credentials."}],
        }

    def test_missing_fields_are_each_named(self) -> None:
        response = APIClient().post("/api/v1/auth/token/", {}, format="json")
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "username", "message": "This field is required."},
            {"field": "password", "message": "This field is required."},
        ]

    def test_a_bad_token_is_refused_with_401(self, personas: Personas) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
        response = client.get("/api/v1/campaigns/")
        assert response.status_code == 401
        assert response.json() == {"detail": "Invalid token.", "errors": [
            {"field": "", "message": "Invalid token."}]}

    def test_the_token_identifies_the_caller(self, personas: Personas) -> None:
        response = personas.client("participant_a").get("/api/v1/campaigns/toy/")
        assert response.json()["role"] == "participant"
        assert response.json()["team"] == "WASEDA"

    def test_drf_create_token_gives_a_working_token(self, personas: Personas) -> None:
        from io import StringIO

        from django.core.management import call_command

        out = StringIO()
        call_command("drf_create_token", "olga", stdout=out)
        key = out.getvalue().split()[2]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.get("/api/v1/campaigns/toy/").json()["role"] == "organiser"


@pytest.mark.django_db
class TestCampaigns:
    @pytest.mark.parametrize("who", PERSONAS)
    def test_everyone_sees_the_campaign_and_its_timeline(self, personas: Personas,
                                                         who: str) -> None:
        response = personas.client(who).get("/api/v1/campaigns/")
        assert response.status_code == 200
        [campaign] = response.json()
        assert campaign["slug"] == "toy"
        assert set(campaign["phases"]) == {"topics_release", "pr_due", "ac_due",
                                           "results_release"}
        assert campaign["role"] == {"organiser": "organiser", "participant_a": "participant",
                                    "participant_b": "participant"}.get(who)

    def test_an_unknown_campaign_is_a_404_naming_it_and_the_users_campaigns(
        self, personas: Personas
    ) -> None:
        response = personas.client("organiser").get("/api/v1/campaigns/nope/")
        assert response.status_code == 404
        assert response.json()["detail"] == (
            "no campaign 'nope' that you take part in; yours: toy")
        outsider = personas.client("outsider").get("/api/v1/campaigns/nope/questions/")
        assert outsider.json()["detail"] == (
            "no campaign 'nope' that you take part in; you take part in none "
            "(GET /api/v1/campaigns/ lists them all)")

    def test_an_unknown_api_path_is_a_json_404(self) -> None:
        response = APIClient().get("/api/v1/nothing/here/")
        assert response.status_code == 404
        assert response.json() == {"detail": "No API endpoint at /api/v1/nothing/here/.",
                                   "errors": []}

    def test_writing_to_a_read_only_endpoint_is_a_405(self, personas: Personas) -> None:
        response = personas.client("organiser").post("/api/v1/campaigns/", {})
        assert response.status_code == 405
        assert response.json()["detail"] == 'Method "POST" not allowed.'


@pytest.mark.django_db
class TestQuestionVisibility:
    # Before their time the questions answer 404, as what one may not see does
    # (docs/access.md), saying when: the campaign's timeline is public.
    @pytest.mark.parametrize(
        ("who", "status"),
        [("organiser", 200), ("participant_a", 404), ("participant_b", 404),
         ("outsider", 404), ("anonymous", 404)],
    )
    def test_before_topics_release_only_organisers_see_questions(
        self, personas: Personas, who: str, status: int
    ) -> None:
        move_phases(personas, topics_in=timedelta(hours=1), results_in=timedelta(days=30))
        response = personas.client(who).get(questions_url(personas))
        assert response.status_code == status
        if who.startswith("participant"):
            assert response.json()["detail"] == (
                f"The questions of toy are released at "
                f"{campaign_time(personas.campaign.topics_release, 'Asia/Tokyo')} (Asia/Tokyo)."
            )

    @pytest.mark.parametrize(
        ("who", "status"),
        [("organiser", 200), ("participant_a", 200), ("participant_b", 200),
         ("outsider", 404), ("anonymous", 404)],
    )
    def test_after_topics_release_participants_see_questions(
        self, personas: Personas, who: str, status: int
    ) -> None:
        move_phases(personas, topics_in=-timedelta(hours=1), results_in=timedelta(days=30))
        response = personas.client(who).get(questions_url(personas))
        assert response.status_code == status
        if status == 200:
            assert [q["qid"] for q in response.json()] == ["D001", "D002", "D003"]
        else:
            assert response.json()["detail"] == (
                "The questions of toy are shown to its participants; the public sees them "
                "once results are released."
            )

    @pytest.mark.parametrize("who", PERSONAS)
    def test_after_results_release_everyone_sees_questions(
        self, personas: Personas, who: str
    ) -> None:
        move_phases(personas, topics_in=-timedelta(days=30), results_in=-timedelta(hours=1))
        response = personas.client(who).get(questions_url(personas))
        assert response.status_code == 200
        assert len(response.json()) == 3

    @pytest.mark.parametrize("who", ["participant_a", "outsider", "anonymous"])
    def test_gold_answers_never_reach_anyone_but_organisers(
        self, personas: Personas, who: str
    ) -> None:
        move_phases(personas, topics_in=-timedelta(days=30), results_in=-timedelta(hours=1))
        question = personas.campaign.questions.get(qid="D001")
        GoldAnswer.objects.create(question=question, text="Ridley Scott")
        response = personas.client(who).get(questions_url(personas))
        assert "Ridley Scott" not in response.content.decode()
        assert "gold_answers" not in response.json()[0]

    def test_organisers_see_the_gold_answers(self, personas: Personas) -> None:
        question = personas.campaign.questions.get(qid="D001")
        GoldAnswer.objects.create(question=question, text="Ridley Scott")
        response = personas.client("organiser").get(questions_url(personas))
        assert response.json()[0] == {"qid": "D001", "text": "Question D001?", "category": "",
                                      "gold_answers": ["Ridley Scott"]}

    def test_a_participant_of_another_campaign_is_an_outsider_here(
        self, personas: Personas
    ) -> None:
        from tests.factories import CampaignFactory, TeamFactory, make_member

        other = CampaignFactory.create(slug="other")
        make_member(other, "oscar", TeamFactory.create(campaign=other, name="ELSEWHERE"))
        response = personas.client("outsider").get(questions_url(personas))
        assert response.status_code == 404


@pytest.mark.django_db
def test_the_openapi_schema_lists_the_v1_endpoints() -> None:
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert {"/api/v1/auth/token/", "/api/v1/campaigns/", "/api/v1/campaigns/{slug}/",
            "/api/v1/campaigns/{slug}/questions/", "/api/v1/campaigns/{slug}/testbank/",
            "/api/v1/testbank/{item_id}/"} <= set(paths)
    assert set(paths["/api/v1/testbank/{item_id}/"]) >= {"get", "patch", "delete"}


@pytest.mark.django_db
def test_the_api_docs_page_renders() -> None:
    response = APIClient().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content
    # Served from our static files, not a CDN: the page must work offline.
    bundle = b"/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"
    assert bundle in response.content
    assert b"cdn." not in response.content
