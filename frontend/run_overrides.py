"""Organiser pages for run overrides and quotas; thin views, 404 to anyone else, as the
dashboard answers. Every change is a POST with a CSRF token and a reason; the team reads
the audit lines on its run and team pages (frontend.views)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from campaign.models import Campaign, Role
from campaign.selectors import campaign_membership, campaign_role
from campaign.text_fields import NOTE, CleanTextFormField
from grading.review.run_overrides import run_override
from submissions.models import MAX_GRANT, Run, RunActionKind
from submissions.overrides import OverrideRefused, quota_grant
from submissions.quota import quota_grants, quota_standings, run_actions

NOT_HERE = "No such page."


class RunOverrideForm(forms.Form):
    action = forms.ChoiceField(label="Action", choices=RunActionKind.choices,
                               widget=forms.RadioSelect)
    reason = CleanTextFormField(label="Reason (the team reads it)", cap=NOTE, what="reason",
                                widget=forms.Textarea(attrs={"rows": 3}))


class QuotaGrantForm(forms.Form):
    team = forms.ChoiceField(label="Team")
    track = forms.ChoiceField(label="Track")
    extra_runs = forms.IntegerField(label="Extra runs", min_value=1, max_value=MAX_GRANT,
                                    initial=1)
    reason = CleanTextFormField(label="Reason (the team reads it)", cap=NOTE, what="reason",
                                widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        teams = campaign.teams.order_by("name").values_list("name", flat=True)
        tracks = campaign.tracks.order_by("slug").values_list("slug", flat=True)
        self.fields["team"].choices = [(name, name) for name in teams]  # type: ignore[attr-defined]
        self.fields["track"].choices = [(s, s) for s in tracks]  # type: ignore[attr-defined]


def overrides_visible(*, run: Run, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether `user` reads the organisers' actions on `run`: its organisers and its own
    team, not the other teams who see a shared PR run."""
    campaign = run.track.campaign
    if campaign_role(campaign=campaign, user=user) == Role.ORGANISER:
        return True
    membership = campaign_membership(campaign=campaign, user=user)
    return membership is not None and membership.team_id == run.team_id


def _organiser(request: HttpRequest, campaign: Campaign) -> User:
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise Http404(NOT_HERE)
    assert isinstance(request.user, User)  # login_required ran first
    return request.user


@login_required
def run_overrides(request: HttpRequest, run_id: int) -> HttpResponse:
    """A run's overrides: its audit lines, and the form to re-run, withdraw, restore it,
    or charge / refund its failure."""
    run = get_object_or_404(Run.objects.select_related("track__campaign", "team"), pk=run_id)
    user = _organiser(request, run.track.campaign)
    form = RunOverrideForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        action = RunActionKind(form.cleaned_data["action"])
        try:
            run_override(run=run, action=action, user=user, reason=form.cleaned_data["reason"])
        except OverrideRefused as refused:
            form.add_error("reason" if refused.field == "reason" else None, refused.message)
        else:
            messages.success(request, f"{run.name}: {action.label.lower()}.")
            return redirect("run-overrides", run_id=run.pk)
    context = {"run": run, "campaign": run.track.campaign, "form": form,
               "actions": run_actions(run=run)}
    return render(request, "frontend/organiser/run_overrides.html", context,
                  status=400 if form.errors else 200)


@login_required
def quota(request: HttpRequest, slug: str) -> HttpResponse:
    """Every team's standing against its run quota, the grants, and the form to grant."""
    campaign = get_object_or_404(Campaign, slug=slug)
    user = _organiser(request, campaign)
    form = QuotaGrantForm(request.POST or None, campaign=campaign)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        team = campaign.teams.get(name=data["team"])
        track = campaign.tracks.get(slug=data["track"])
        try:
            quota_grant(team=team, track=track, extra_runs=data["extra_runs"], user=user,
                        reason=data["reason"])
        except OverrideRefused as refused:
            form.add_error("reason" if refused.field == "reason" else None, refused.message)
        else:
            messages.success(request, f"Team {team.name} was granted {data['extra_runs']} "
                                      f"extra run(s) in track {track.slug}.")
            return redirect("quota", slug=slug)
    context = {"campaign": campaign, "form": form,
               "standings": quota_standings(campaign=campaign),
               "grants": quota_grants(campaign=campaign)}
    return render(request, "frontend/organiser/quota.html", context,
                  status=400 if form.errors else 200)
