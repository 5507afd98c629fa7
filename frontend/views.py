"""Server-rendered pages. Thin: parse with a form, call one service or selector, render."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone

from campaign.kinds import kinds
from campaign.models import Campaign, Role
from campaign.selectors import (
    TrackWindow,
    campaign_list,
    campaign_membership,
    campaign_role,
    campaign_timeline,
    question_list,
    questions_refusal,
    track_windows,
)
from frontend.forms import RunUploadForm
from frontend.run_overrides import overrides_visible
from scoring.selectors import runs_scores_visible
from submissions.checks import RunRefused
from submissions.formats.upload_window import campaign_time
from submissions.models import RunStatus
from submissions.quota import quota_grants, quota_standings, run_actions, team_run_actions
from submissions.selectors import run_for_user, runs_visible, shared_pr_runs
from submissions.services import INVALID_RUN, run_submit
from submissions.throttles import upload_page_refusal

SUBMISSIONS_CLOSED = "Submissions are closed: every track's deadline has passed."
SUBMISSIONS_NOT_OPEN = "Submissions open at {at} ({zone}), with the questions."
NO_TRACKS = "Submissions open once the campaign has tracks."


def _submissions_closed(
    *, campaign: Campaign, windows: Sequence[TrackWindow], now: datetime
) -> str | None:
    """What a page says instead of a Submit link when no track takes participants' runs
    now; None while one does."""
    if any(window.open for window in windows):
        return None
    if not windows:
        return NO_TRACKS
    if now < campaign.topics_release:
        return SUBMISSIONS_NOT_OPEN.format(
            at=campaign_time(campaign.topics_release, campaign.timezone), zone=campaign.timezone)
    return SUBMISSIONS_CLOSED


def _submit_link_closed(*, campaign: Campaign, role: str | None, now: datetime) -> str | None:
    """`_submissions_closed` for whoever looks; None to an organiser, who may enter runs at
    any time."""
    if role == Role.ORGANISER:
        return None
    return _submissions_closed(campaign=campaign, now=now,
                               windows=track_windows(campaign=campaign, now=now))


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/home.html", {"campaigns": campaign_list()})


def campaign_home(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    membership = campaign_membership(campaign=campaign, user=request.user)
    role = campaign_role(campaign=campaign, user=request.user)
    now = timezone.now()
    refusal = questions_refusal(campaign=campaign, role=role, now=now)
    context = {
        "campaign": campaign,
        "role": role,
        "team": membership.team if membership else None,
        "timeline": campaign_timeline(campaign=campaign, now=now),
        "submit_closed": _submit_link_closed(campaign=campaign, role=role, now=now),
        # The questions as the API gives them to this person (never the gold answers).
        "questions": None if refusal else question_list(campaign=campaign, with_gold=False),
        "questions_refusal": refusal,
    }
    return render(request, "frontend/campaign_home.html", context)


@login_required
def campaign_runs(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    now = timezone.now()
    role = campaign_role(campaign=campaign, user=request.user)
    runs = runs_visible(campaign=campaign, user=request.user, now=now, include_shared=False)
    shared = shared_pr_runs(campaign=campaign, now=now) if role else None
    context = {
        "campaign": campaign,
        "role": role,
        "runs": runs.select_related("uploaded_by").order_by("track__slug", "name", "-created_at"),
        "shared": shared,
        "shared_after": campaign.pr_due,
        "submit_closed": _submit_link_closed(campaign=campaign, role=role, now=now),
        # Only PR runs are shared: a campaign of ranking/response tracks has nothing to say.
        "has_pr_track": campaign.tracks.filter(kind__in=kinds(shared=True)).exists(),
    }
    return render(request, "frontend/runs.html", context)


@login_required
def run_upload(request: HttpRequest, slug: str) -> HttpResponse:
    """The upload form with the tracks open now (every track, to an organiser); when none
    is, the page says submissions are closed, each track with its deadline."""
    campaign = get_object_or_404(campaign_list(), slug=slug)
    now = timezone.now()
    windows = track_windows(campaign=campaign, now=now)
    organiser = campaign_role(campaign=campaign, user=request.user) == Role.ORGANISER
    form = RunUploadForm(request.POST or None, request.FILES or None, windows=windows,
                         zone=campaign.timezone, organiser=organiser)
    if not form.offered:
        context = {"campaign": campaign, "windows": windows,
                   "closed": _submissions_closed(campaign=campaign, windows=windows, now=now)}
        return render(request, "frontend/run_upload_closed.html", context,
                      status=403 if request.method == "POST" else 200)
    # Counted with the API's uploads of the team, valid or not, as the API counts them.
    throttled = upload_page_refusal(request, campaign) if request.method == "POST" else None
    refusal = throttled
    invalid = None
    if throttled is None and request.method == "POST" and form.is_valid():
        assert isinstance(request.user, User)  # login_required
        upload = form.cleaned_data["file"]
        try:
            run = run_submit(
                track=campaign.tracks.get(slug=form.cleaned_data["track"]), user=request.user,
                name=form.cleaned_data["name"], file=upload, size=upload.size,
                filename=upload.name or "", description=form.cleaned_data["description"],
            )
        except RunRefused as refused:
            refusal = refused.detail
        else:
            if run.status != RunStatus.INVALID:
                return redirect("run-detail", run_id=run.pk)
            invalid = run
    context = {
        "campaign": campaign,
        "form": form,
        "refusal": refusal,
        "invalid": invalid,
        "invalid_summary": (
            INVALID_RUN.format(name=invalid.name, count=len(invalid.validation_report))
            if invalid else None
        ),
    }
    status = 429 if throttled else 400 if (refusal or invalid or form.errors) else 200
    return render(request, "frontend/run_upload.html", context, status=status)


@login_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = run_for_user(run_id=run_id, user=request.user, now=timezone.now())
    if run is None:
        raise Http404("No such run, or not one you may see.")
    campaign = run.track.campaign
    # The organisers' actions on the run are its team's business (and theirs), not that
    # of the other teams who see a shared PR run.
    actions = run_actions(run=run) if overrides_visible(run=run, user=request.user) else None
    context = {"run": run, "campaign": campaign, "actions": actions,
               "organiser": campaign_role(campaign=campaign, user=request.user) == Role.ORGANISER}
    return render(request, "frontend/run_detail.html", context)


@login_required
def run_download(request: HttpRequest, run_id: int) -> FileResponse:
    run = run_for_user(run_id=run_id, user=request.user, now=timezone.now())
    if run is None or not run.file:
        raise Http404("No such run, or not one you may see.")
    return FileResponse(run.file.open("rb"), as_attachment=True, filename=run.name,
                        content_type="text/plain; charset=utf-8")


@login_required
def team_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant's team: members, runs (every version) and the scores it may see."""
    campaign = get_object_or_404(campaign_list(), slug=slug)
    membership = campaign_membership(campaign=campaign, user=request.user)
    if membership is None or membership.team is None:
        raise Http404("You are not in a team of this campaign.")
    now = timezone.now()
    runs = list(runs_visible(campaign=campaign, user=request.user, now=now, include_shared=False)
                .select_related("track__campaign").order_by("track__slug", "name", "-created_at"))
    scores = runs_scores_visible(runs=[run for run in runs if run.is_current],
                                 user=request.user, now=now)
    rows = [(run, scores.get(run.pk)) for run in runs]
    context = {
        "campaign": campaign, "team": membership.team,
        "members": membership.team.memberships.select_related("user").order_by("user__username"),
        "rows": rows, "timeline": campaign_timeline(campaign=campaign, now=now),
        "submit_closed": _submit_link_closed(campaign=campaign, role=membership.role, now=now),
        "standings": quota_standings(campaign=campaign, team=membership.team),
        "grants": quota_grants(campaign=campaign, team=membership.team),
        "actions": team_run_actions(campaign=campaign, team=membership.team),
    }
    return render(request, "frontend/team.html", context)
