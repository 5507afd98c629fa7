"""Arguments that management commands share: a campaign by slug, a user by name."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import CommandError

from campaign.models import Campaign


def campaign_arg(slug: str) -> Campaign:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        slugs = ", ".join(Campaign.objects.values_list("slug", flat=True)) or "none loaded"
        raise CommandError(f"no campaign '{slug}' (campaigns: {slugs})")
    return campaign


def user_arg(username: str) -> AbstractBaseUser:
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user '{username}'")
    return user
