"""The benchmark's campaign in the database: created, its runs submitted, then deleted."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grading_bench.content import question_text

if TYPE_CHECKING:
    from submissions.models import Run


def make_campaign(questions: int, suffix: str = "") -> str:
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.utils import timezone

    from campaign.models import Campaign, Membership, Question, Role, Team, Track

    now = timezone.now()
    campaign = Campaign.objects.create(
        slug=f"bench-grading-{os.getpid()}{suffix}", title="bench grading",
        topics_release=now - timedelta(days=2), pr_due=now - timedelta(days=1),
        ac_due=now + timedelta(days=1))
    Question.objects.bulk_create(
        Question(campaign=campaign, qid=f"Q{q:04d}", text=question_text(q), position=q)
        for q in range(1, questions + 1))
    for slug in ("pr", "ac"):
        Track.objects.create(campaign=campaign, slug=slug, kind=slug)
    Team.objects.create(campaign=campaign, name="BENCH")
    user, _ = User.objects.get_or_create(username="bench-grading-organiser")
    Membership.objects.create(campaign=campaign, user=user, role=Role.ORGANISER)
    return campaign.slug


def submit(slug: str, track_slug: str, name: str, path: Path) -> Run:
    from django.contrib.auth.models import User

    from campaign.models import Team, Track
    from submissions.models import RunStatus
    from submissions.services import run_submit

    track = Track.objects.select_related("campaign").get(campaign__slug=slug, slug=track_slug)
    Team.objects.get_or_create(campaign=track.campaign, name=name.split("-", 1)[0])
    user = User.objects.get(username="bench-grading-organiser")
    started = time.perf_counter()
    with path.open("rb") as file:
        run = run_submit(track=track, user=user, name=name, file=file,
                         size=path.stat().st_size, filename=name)
    assert run.status == RunStatus.VALID, run.validation_report[:3]
    print(f"  submitted {name}: {run.records:,} records in {time.perf_counter() - started:.2f} s")
    return run


def delete_campaign(slug: str) -> None:
    from campaign.models import Campaign
    from grading.models import Judgment
    from submissions.models import Run

    Run.objects.filter(track__campaign__slug=slug).delete()
    Judgment.objects.filter(campaign__slug=slug).delete()
    Campaign.objects.filter(slug=slug).delete()

