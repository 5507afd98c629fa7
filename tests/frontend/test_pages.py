"""The public pages of the foundation: campaign list and campaign home."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from tests.support import Personas


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
