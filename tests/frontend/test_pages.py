"""The public pages of the foundation: campaign list and campaign home."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from campaign.models import GoldAnswer
from tests.support import Personas, share_pr_runs


@pytest.mark.django_db
def test_the_home_page_lists_campaigns(personas: Personas) -> None:
    response = Client().get("/")
    assert response.status_code == 200
    assert b'href="/campaigns/toy/"' in response.content


@pytest.mark.django_db
def test_the_campaign_page_shows_deadlines_in_the_campaign_time_zone_with_utc_on_hover(
    personas: Personas,
) -> None:
    campaign = personas.campaign
    response = Client().get("/campaigns/toy/")
    page = response.content.decode()
    local = campaign.pr_due.astimezone(ZoneInfo("Asia/Tokyo"))
    assert f'{local:%Y-%m-%d %H:%M}</time>' in page
    assert f'title="{campaign.pr_due:%Y-%m-%d %H:%M} UTC"' in page
    assert "Times in Asia/Tokyo" in page


@pytest.mark.django_db
def test_an_unknown_campaign_page_is_a_404() -> None:
    assert Client().get("/campaigns/nope/").status_code == 404


@pytest.mark.django_db
def test_the_campaign_page_lists_the_questions_to_whom_they_are_released(
    personas: Personas,
) -> None:
    campaign = personas.campaign
    d002 = campaign.questions.get(qid="D002")
    question = d002.text
    GoldAnswer.objects.create(question=d002, text="Neil Armstrong")
    signed_in = Client()
    signed_in.force_login(User.objects.get(pk=personas.participant_a.pk))

    campaign.topics_release = timezone.now() + timedelta(days=1)
    campaign.save()
    page = signed_in.get("/campaigns/toy/").content.decode()
    assert question not in page and "The questions of toy are released at" in page

    share_pr_runs(personas)  # topics released ten days ago
    page = signed_in.get("/campaigns/toy/").content.decode()
    assert f"<td>D002</td><td>{question}</td>" in page
    assert "Neil Armstrong" not in page  # the gold answers stay the organisers'
    # The public waits for the results, as the API makes it.
    assert question not in Client().get("/campaigns/toy/").content.decode()
