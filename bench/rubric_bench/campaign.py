"""The benchmark's campaign in the database, through the services users go through:
`campaign_load` from the generated YAML (corpus and test bank with it), then
`run_submit` for every run file, as the organiser."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from rubric_bench.content import ORGANISER, TRACK, CampaignFiles

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

    from campaign.models import Track


def load_campaign(files: CampaignFiles) -> str:
    """Load the campaign and submit its runs; its slug. Prints what each step took."""
    from django.contrib.auth import get_user_model

    from campaign.campaign_file import read_campaign_file
    from campaign.models import Track
    from campaign.services import campaign_load

    started = time.perf_counter()
    report = campaign_load(spec=read_campaign_file(files.yaml_path))
    print(f"  {report.summary()} ({time.perf_counter() - started:.2f} s)")
    track = Track.objects.select_related("campaign").get(campaign=report.campaign, slug=TRACK)
    organiser = get_user_model().objects.get(username=ORGANISER)
    started = time.perf_counter()
    for path in files.runs:
        _submit(track, organiser, path)
    print(f"  submitted {len(files.runs)} ranking runs with run_submit "
          f"({time.perf_counter() - started:.2f} s)")
    return report.campaign.slug


def _submit(track: Track, organiser: AbstractBaseUser, path: Path) -> None:
    from submissions.models import RunStatus
    from submissions.services import run_submit

    with path.open("rb") as file:
        run = run_submit(track=track, user=organiser, name=path.name, file=file,
                         size=path.stat().st_size, filename=path.name)
    if run.status != RunStatus.VALID:
        raise RuntimeError(f"{path.name} was refused: {run.validation_report[:3]}")
