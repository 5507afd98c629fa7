"""Server-rendered pages. Thin: one selector call, one template."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from campaign.selectors import campaign_list, campaign_role, campaign_timeline


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/home.html", {"campaigns": campaign_list()})


def campaign_home(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    context = {
        "campaign": campaign,
        "role": campaign_role(campaign=campaign, user=request.user),
        "timeline": campaign_timeline(campaign=campaign, now=timezone.now()),
    }
    return render(request, "frontend/campaign_home.html", context)
