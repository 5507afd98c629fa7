"""Reads for campaigns: who a user is in a campaign and what they may see."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from campaign.models import Campaign, Membership, Question, Role

QUESTIONS_NOT_YET = "The questions of {campaign} are released at {at} (UTC)."
QUESTIONS_NOT_PUBLIC = (
    "The questions of {campaign} are shown to its participants; the public sees them "
    "once results are released."
)


def campaign_list() -> QuerySet[Campaign]:
    """Every campaign: that a campaign exists, and its timeline, are public."""
    return Campaign.objects.prefetch_related("tracks")


def campaign_membership(
    *, campaign: Campaign, user: AbstractBaseUser | AnonymousUser
) -> Membership | None:
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.select_related("team")
        .filter(campaign=campaign, user_id=user.pk)
        .first()
    )


def campaign_role(*, campaign: Campaign, user: AbstractBaseUser | AnonymousUser) -> str | None:
    """'organiser', 'participant' or None (the public). Superusers organise every campaign."""
    if user.is_authenticated and getattr(user, "is_superuser", False):
        return Role.ORGANISER
    membership = campaign_membership(campaign=campaign, user=user)
    return membership.role if membership else None


def questions_refusal(
    *, campaign: Campaign, role: str | None, now: datetime
) -> str | None:
    """Why this role may not see the questions now, or None if it may.

    Organisers always may; participants from topics_release; the public (outsiders,
    anonymous visitors) once results are released, as the test collection then is.
    """
    if role == Role.ORGANISER:
        return None
    if role == Role.PARTICIPANT:
        if campaign.topics_released(now):
            return None
        return QUESTIONS_NOT_YET.format(
            campaign=campaign.slug, at=campaign.topics_release.isoformat()
        )
    if campaign.results_released(now):
        return None
    return QUESTIONS_NOT_PUBLIC.format(campaign=campaign.slug)


def question_list(*, campaign: Campaign, with_gold: bool) -> QuerySet[Question]:
    questions = campaign.questions.all()
    return questions.prefetch_related("gold_answers") if with_gold else questions


@dataclass(frozen=True)
class TimelineEntry:
    """One phase as people see it: in the campaign's zone, with UTC beside it."""

    key: str
    label: str
    at_utc: datetime
    at_local: datetime
    passed: bool


PHASE_LABELS = {
    "topics_release": "Questions released",
    "pr_due": "PR runs due (then shared with all teams)",
    "ac_due": "AC runs due",
    "results_release": "Results released",
}


def campaign_timeline(*, campaign: Campaign, now: datetime) -> list[TimelineEntry]:
    zone = zoneinfo.ZoneInfo(campaign.timezone)
    entries = []
    for key, label in PHASE_LABELS.items():
        at: datetime | None = getattr(campaign, key)
        if at is None:
            continue
        entries.append(TimelineEntry(
            key=key, label=label, at_utc=at.astimezone(UTC),
            at_local=at.astimezone(zone), passed=now >= at,
        ))
    return entries
