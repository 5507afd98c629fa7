"""Run uploads per team: the throttle on the upload endpoints and the Submit page, one count
for both (its rate is the `uploads_team` scope of DEFAULT_THROTTLE_RATES)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.views import APIView

from campaign.models import Campaign
from campaign.selectors import campaign_membership
from infrastructure.throttles import LiveRateThrottle

UPLOADS_TEAM = "uploads_team"


class UploadsPerTeamThrottle(LiveRateThrottle):
    """Run uploads through the API (a file or a zip) per team of the campaign in the URL, valid
    or not; organisers and users without a team are counted on their own."""

    scope = UPLOADS_TEAM

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        user = request.user
        if request.method in SAFE_METHODS or not isinstance(user, AbstractBaseUser):
            return None
        campaign = Campaign.objects.filter(slug=view.kwargs.get("slug", "")).first()
        membership = campaign_membership(campaign=campaign, user=user) if campaign else None
        if membership is not None and membership.team_id is not None:
            ident = f"team-{membership.team_id}"
        else:
            ident = f"user-{user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


#: What the Submit page says when the team has used its uploads for now.
TOO_MANY_UPLOADS = ("your team has uploaded as many runs as it may for now (API and pages "
                    "together); try again in {wait} s")


def upload_page_refusal(request: Any, campaign: Campaign) -> str | None:
    """Why the Submit page refuses an upload now (`TOO_MANY_UPLOADS`), counted with the API's
    uploads of the same team; None when it may go ahead (and then it counts)."""
    throttle = UploadsPerTeamThrottle()
    if throttle.allow_request(request, SimpleNamespace(kwargs={"slug": campaign.slug})):
        return None
    return TOO_MANY_UPLOADS.format(wait=max(1, round(throttle.wait() or 1)))
