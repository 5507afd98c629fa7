"""The tiny RUBRIC campaign (tests/data/rubric) with its personas, open for runs."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.utils import timezone

from campaign.models import Campaign, Track
from tests.factories import UserFactory
from tests.support import REPO, Personas, Upload

RUBRIC = REPO / "tests" / "data" / "rubric"
RUBRIC_RUNS = RUBRIC / "runs"


def rubric_run(name: str) -> bytes:
    """A run file of the tiny RUBRIC campaign (tests/data/rubric/runs)."""
    return (RUBRIC_RUNS / name).read_bytes()


@pytest.fixture
def rubric(db: None) -> Personas:
    """tests/data/rubric/campaign.yaml loaded as organisers load it, with both tracks open
    for a week and the R2C2 deadlines (unused here) long past: only `track.due()` counts."""
    call_command("load_campaign", str(RUBRIC / "campaign.yaml"), stdout=io.StringIO())
    campaign = Campaign.objects.get(slug="movie-rubric")
    now = timezone.now()
    campaign.topics_release = now - timedelta(days=10)
    campaign.pr_due = campaign.ac_due = now - timedelta(days=5)
    campaign.save()
    Track.objects.filter(campaign=campaign).update(own_due=now + timedelta(days=7))
    return Personas(
        campaign=campaign,
        organiser=campaign.memberships.get(user__username="olga").user,
        participant_a=campaign.memberships.get(user__username="alice").user,  # WASEDA
        participant_b=campaign.memberships.get(user__username="bob").user,  # KYOTO
        outsider=UserFactory.create(username="oscar"),
    )


@pytest.fixture
def rubric_upload(rubric: Personas) -> Upload:
    """POST a run of the RUBRIC campaign through the API as a persona."""

    def post(who: str, name: str, content: bytes, track: str, description: str = "") -> Any:
        return rubric.client(who).post(
            "/api/v1/campaigns/movie-rubric/runs/",
            {"track": track, "name": name, "description": description,
             "file": SimpleUploadedFile(name, content)},
            format="multipart",
        )

    return post
