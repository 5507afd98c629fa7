"""Fixtures for run submission: tracks on the toy campaign, files from shared/examples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaign.models import Track
from tests.support import Personas

# The test client's response (json(), status_code); DRF's stubs type it too narrowly.
Upload = Callable[..., Any]


@pytest.fixture
def upload(personas: Personas, tracks: dict[str, Track]) -> Upload:
    """POST a run through the API as a persona."""

    def post(
        who: str, name: str, content: bytes, track: str | None = None, description: str = ""
    ) -> Any:
        track = track or ("ac" if "-AC-" in name else "pr")
        return personas.client(who).post(
            f"/api/v1/campaigns/{personas.campaign.slug}/runs/",
            {
                "track": track,
                "name": name,
                "description": description,
                "file": SimpleUploadedFile(name, content),
            },
            format="multipart",
        )

    return post
