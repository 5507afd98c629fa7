"""Organiser pages: the dashboard and judgment review. Organisers only; thin views."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from campaign.kinds import kinds
from campaign.models import Campaign, Role
from campaign.selectors import campaign_role
from frontend.agreement import agreement_sections
from frontend.forms import JudgmentEditForm
from grading.agreement.judges import judge_agreement
from grading.models import JudgeValidation, Judgment, JudgmentKind
from grading.review.edits import EditRefused, judgment_confirm, judgment_edit
from grading.review.filters import ReviewQueueFilter
from grading.review.judgments import judgment_items, judgment_uses
from grading.review.queue import doubt_counts, is_doubtful
from grading.selectors import grading_progress, runs_using
from grading.serializers import TestBankGenerateSerializer
from grading.setup import official_model_name
from grading.validation.services import grading_refusal
from grading.work.dispatch import enqueue_scoring, enqueue_testbank_generation
from grading.work.rounds import campaign_grading_queue, enqueue_grading
from grading.work.stalls import runs_not_done, worker_pulses
from scoring.selectors import evaluation_latest
from scoring.services import PublishRefused, evaluation_publish
from submissions.selectors import invalid_uploads, runs_by_team

PAGE_SIZE = 50


def _organiser_campaign(request: HttpRequest, slug: str) -> Campaign:
    campaign = get_object_or_404(Campaign, slug=slug)
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        # Not a 403: who organises what is no business of other people.
        raise Http404("No such campaign page.")
    return campaign


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)  # login_required ran first
    return request.user


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    latest = {
        track.slug: evaluation_latest(track=track)
        for track in campaign.tracks.order_by("slug")
    }
    context = {
        "campaign": campaign,
        "tracks": list(campaign.tracks.order_by("slug")),
        "teams": runs_by_team(campaign=campaign),
        "invalid": invalid_uploads(campaign=campaign),
        "progress": grading_progress(campaign=campaign),
        "agreement": judge_agreement(campaign=campaign),
        "pending": len(campaign_grading_queue(campaign=campaign)),
        "latest": latest,
        "doubt": doubt_counts(campaign=campaign),
        "validations": JudgeValidation.objects.filter(campaign=campaign)[:5],
        "grading_refusal": grading_refusal(campaign=campaign,
                                           judge_model=official_model_name()),
        "rubric": any(track.is_rubric for track in campaign.tracks.all()),
        "agreement_report": agreement_sections(campaign=campaign),
    }
    return render(request, "frontend/organiser/dashboard.html", context)


@login_required
def grading_stalls(request: HttpRequest, slug: str) -> HttpResponse:
    """The runs not done yet, oldest in their state first, and the workers' heartbeats."""
    campaign = _organiser_campaign(request, slug)
    now = timezone.now()
    return render(request, "frontend/organiser/stalls.html", {
        "campaign": campaign, "now": now,
        "runs": runs_not_done(campaign=campaign, now=now),
        "workers": worker_pulses(now=now),
        "stale_seconds": settings.GRADING_STALE_SECONDS,
        "max_requeues": settings.GRADING_MAX_REQUEUES,
        "reap_every": settings.GRADING_REAP_EVERY,
    })


@login_required
@require_POST
def start_grading(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    refusal = grading_refusal(campaign=campaign, judge_model=official_model_name())
    if refusal:
        messages.error(request, refusal)
        return redirect("dashboard", slug=slug)
    run_ids = campaign_grading_queue(campaign=campaign,
                                     include_graded=request.POST.get("all") == "1")
    enqueue_grading(run_ids)
    messages.success(request, f"{len(run_ids)} run(s) queued for grading.")
    return redirect("dashboard", slug=slug)


@login_required
@require_POST
def start_testbank_generation(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    form = TestBankGenerateSerializer(data=request.POST)
    if not form.is_valid():
        for field, problems in form.errors.items():
            messages.error(request, f"{field}: {' '.join(str(p) for p in problems)}")
        return redirect("dashboard", slug=slug)
    target, n = form.validated_data["target"], form.validated_data["n"]
    enqueue_testbank_generation(campaign_id=campaign.pk, target=target, n=n,
                                user_id=_user(request).pk)
    messages.success(request, f"Drafting {n} {target} per query without test-bank items: "
                              "the drafts appear in the test bank when a worker is done.")
    return redirect("dashboard", slug=slug)


@login_required
@require_POST
def start_scoring(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    enqueue_scoring(campaign.pk)
    messages.success(request, "Scoring queued: the leaderboards are recomputed in a moment.")
    return redirect("dashboard", slug=slug)


@login_required
@require_POST
def publish(request: HttpRequest, slug: str, track: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    evaluation = evaluation_latest(track=get_object_or_404(campaign.tracks, slug=track))
    if evaluation is None:
        messages.error(request, f"Track {track} has not been scored yet.")
        return redirect("dashboard", slug=slug)
    try:
        evaluation_publish(evaluation=evaluation, user=_user(request))
    except PublishRefused as refused:
        # No force here: the page sends organisers to review (the command and API have it).
        for problem in refused.problems:
            messages.error(request, f"The {track} leaderboard was not published: "
                                    f"{problem.message}.")
    else:
        messages.success(request, f"The {track} leaderboard is published.")
    return redirect("dashboard", slug=slug)


@login_required
def judgments(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    selection = ReviewQueueFilter(request.GET, campaign=campaign)
    # A filter that does not parse lists nothing: its error says why, beside the field.
    valid = selection.is_valid()
    page = Paginator(selection.qs if valid else [], PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "campaign": campaign, "form": selection.form, "page": page,
        "items": judgment_items(campaign=campaign, uses=page.object_list),
        "total": page.paginator.count, "query": query.urlencode(),
        "waiting": judgment_uses(campaign=campaign, to_review=True).count(),
    }
    return render(request, "frontend/organiser/judgments.html", context,
                  status=200 if valid else 400)


@login_required
def judgment_detail(request: HttpRequest, judgment_id: int) -> HttpResponse:
    judgment = get_object_or_404(Judgment.objects.select_related("campaign"), pk=judgment_id)
    _organiser_campaign(request, judgment.campaign.slug)
    if judgment.kind == JudgmentKind.RUBRIC:
        # A grade is edited on its own page (a grade and a note, not correct/relevant);
        # it is the same grade under every ranking/response track of the campaign.
        track = judgment.campaign.tracks.filter(
            kind__in=kinds(rubric=True)).order_by("slug").first()
        if track is None:
            raise Http404("No ranking or response track to grade on.")
        return redirect("rubric-grade", slug=judgment.campaign.slug, track=track.slug,
                        judgment_id=judgment.pk)
    form = JudgmentEditForm(request.POST or None, judgment=judgment)
    if request.method == "POST" and form.is_valid():
        try:
            judgment_edit(judgment=judgment, user=_user(request), changes=form.changes(),
                          reason=form.cleaned_data["reason"], note=form.cleaned_data["note"])
        except EditRefused as refused:
            form.add_error(None, str(refused))
        else:
            return _reviewed(request, judgment, "edited")
    context = {
        "judgment": judgment, "campaign": judgment.campaign, "form": form,
        "history": judgment.edits.select_related("edited_by"),
        "runs": runs_using(judgment=judgment),
        "doubtful": is_doubtful(judgment=judgment, campaign=judgment.campaign),
    }
    status = 400 if form.errors else 200
    return render(request, "frontend/organiser/judgment.html", context, status=status)


@login_required
@require_POST
def confirm_judgment(request: HttpRequest, judgment_id: int) -> HttpResponse:
    judgment = get_object_or_404(Judgment.objects.select_related("campaign"), pk=judgment_id)
    _organiser_campaign(request, judgment.campaign.slug)
    try:
        judgment_confirm(judgment=judgment, user=_user(request))
    except EditRefused as refused:
        messages.error(request, f"Judgment {judgment.pk} was not confirmed: {refused}.")
        return redirect("judgment-detail", judgment_id=judgment.pk)
    return _reviewed(request, judgment, "confirmed")


def _reviewed(request: HttpRequest, judgment: Judgment, what: str) -> HttpResponse:
    """After an edit or a confirmation (whose service queued the runs for re-grading and
    so re-scoring): say so, go back."""
    runs = runs_using(judgment=judgment)
    messages.success(request, f"Judgment {judgment.pk} {what}; "
                              f"{len(runs)} run(s) queued for re-grading.")
    back = request.POST.get("next", "")
    # Only back to a page of this site (no open redirect).
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return redirect(back)
    return redirect("judgment-detail", judgment_id=judgment.pk)
