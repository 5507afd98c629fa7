"""The results page gives the release time in the campaign's time zone, UTC on hover.

docs/access.md: deadlines are enforced in UTC and shown in the campaign's zone, as
the campaign page's timeline already does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from scoring.services import campaign_score
from submissions.models import Run
from tests.grading.rounds import round_graded
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

RESULTS = "/campaigns/toy/results/"
# 00:00 on 1 September in Tokyo is 15:00 on 31 August in UTC: the date and hour differ.
RELEASE_UTC = datetime(2099, 8, 31, 15, 0, tzinfo=UTC)


def _release_at(personas: Personas, zone: str) -> None:
    campaign = personas.campaign
    campaign.timezone = zone
    campaign.results_release = RELEASE_UTC
    campaign.save()


def _shown(zone: str) -> str:
    """How the page should write RELEASE_UTC: the zone's time, UTC in the title."""
    local = RELEASE_UTC.astimezone(ZoneInfo(zone))
    return (f'<time datetime="{RELEASE_UTC.isoformat()}" title="2099-08-31 15:00 UTC">'
            f"{local:%Y-%m-%d %H:%M}</time> ({zone})")


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "America/New_York"])
def test_the_public_is_told_the_release_time_in_the_campaigns_zone(
    personas: Personas, zone: str
) -> None:
    _release_at(personas, zone)

    html = Client().get(RESULTS).content.decode()

    assert f"Published leaderboards become public at {_shown(zone)}." in html
    assert "15:00 UTC</time>" not in html  # UTC only on hover


def test_a_published_leaderboard_says_in_the_campaigns_zone_when_the_public_sees_it(
    personas: Personas, toy_ac_run: Run, judge: OpenAIJudge
) -> None:
    run_grade(run=toy_ac_run, judge=judge)
    round_graded(toy_ac_run)
    campaign_score(campaign=personas.campaign)
    response = personas.client("organiser").post("/api/v1/campaigns/toy/leaderboards/ac/publish/")
    assert response.status_code == 200
    _release_at(personas, "Asia/Tokyo")

    html = signed_in(personas, "participant_a").get(RESULTS).content.decode()

    assert ('Participants see it now; the public from <time datetime="2099-08-31T15:00:00+00:00"'
            ' title="2099-08-31 15:00 UTC">2099-09-01 00:00</time> (Asia/Tokyo).') in html
    assert "15:00 UTC</time>" not in html
