"""The results archive from the pages (scoring/archive.py): the full one for organisers, a
team's public part for its members, written while the request waits into a spooled
temporary file (memory when small, disk when large) that the response streams."""

from __future__ import annotations

import tempfile

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from campaign.models import Campaign, Role, Team
from campaign.selectors import campaign_membership, campaign_role
from scoring.archive import archive_filename, campaign_archive_write, published_evaluations

SPOOL_BYTES = 32 << 20


def _organiser_campaign(request: HttpRequest, slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise Http404("No such campaign page.")  # 404, not 403: docs/access.md
    return campaign


def _archive_response(campaign: Campaign, team: Team | None) -> FileResponse:
    now = timezone.now()
    spooled = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (streamed)
    campaign_archive_write(campaign=campaign, target=spooled, team=team, now=now)
    spooled.seek(0)
    return FileResponse(spooled, as_attachment=True, content_type="application/zip",
                        filename=archive_filename(campaign=campaign, team=team, now=now))


@login_required
def archive_page(request: HttpRequest, slug: str) -> HttpResponse:
    """What the full archive holds, its download, and how to replay it."""
    campaign = _organiser_campaign(request, slug)
    return render(request, "frontend/organiser/archive.html", {
        "campaign": campaign,
        "published": [e.track.slug for e in published_evaluations(campaign=campaign)],
    })


@login_required
def archive_full(request: HttpRequest, slug: str) -> FileResponse:
    return _archive_response(_organiser_campaign(request, slug), team=None)


@login_required
def archive_public(request: HttpRequest, slug: str) -> FileResponse:
    """The public part for the requester's team: 404 for anyone not in a team of it."""
    campaign = get_object_or_404(Campaign, slug=slug)
    membership = campaign_membership(campaign=campaign, user=request.user)
    if membership is None or membership.team is None:
        raise Http404("No such campaign page.")
    return _archive_response(campaign, team=membership.team)
