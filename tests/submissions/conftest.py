"""The tiny RUBRIC campaign (tests/data/rubric) with its personas, open for runs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from tests.grading.rubric_support import movie_rubric
from tests.support import Personas, Upload


@pytest.fixture
def rubric(db: None) -> Personas:
    """tests/data/rubric/campaign.yaml loaded as organisers load it, with both tracks open
    for a week and the R2C2 deadlines (unused here) long past: only `track.due()` counts."""
    personas = movie_rubric()
    campaign = personas.campaign
    now = timezone.now()
    campaign.topics_release = now - timedelta(days=10)
    campaign.pr_due = campaign.ac_due = now - timedelta(days=5)
    campaign.save()
    return personas


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
