"""The verification pages of a ranking or response track: the grid, verify grading, a
passage, and the missing-and-spurious lists (docs/results.md, "Verification pages of a
RUBRIC track"). Organisers of the campaign only; 404 for everyone else."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from campaign.models import Track
from frontend.organiser import _organiser_campaign, _user
from frontend.rubric.forms import GapsFilterForm, GradeEditForm, VerificationFilterForm
from grading.models import Judgment, JudgmentKind
from grading.review.edits import EditRefused, judgment_edit
from scoring.meta_selectors import reference_current
from scoring.verification.selectors import (
    answers_by_grade,
    current_items,
    grid_rows,
    manual_qrels_gaps,
    passage_view,
    rubric_queries,
)

GRID_PAGE_SIZE = 25
EDITED = ("Grade set to {grade} wherever this passage text was graded on this item "
          "({uses} passage(s)). Scoring is queued: the leaderboards follow in a moment.")
NO_PASSAGE = "No passage '{docid}' of query {qid} in this campaign."


def _rubric_track(request: HttpRequest, slug: str, track: str) -> Track:
    campaign = _organiser_campaign(request, slug)
    found = get_object_or_404(campaign.tracks.select_related("campaign"), slug=track)
    if not found.is_rubric:
        raise Http404("Only ranking and response tracks are graded on a test bank.")
    return found


def _selection(request: HttpRequest, track: Track) -> VerificationFilterForm:
    form = VerificationFilterForm(
        request.GET, queries=rubric_queries(track=track),
        items_of=lambda qid: current_items(track=track, qid=qid))
    form.is_valid()
    return form


def _query_without_page(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


@login_required
def grid(request: HttpRequest, slug: str, track: str) -> HttpResponse:
    """One query's pool (rows, paginated) by its items (columns), filterable by item and
    by grade; each cell holds its grade, answer and a post-edit form."""
    rubric_track = _rubric_track(request, slug, track)
    form = _selection(request, rubric_track)
    rows = (grid_rows(track=rubric_track, qid=form.cleaned_data["qid"], items=form.items,
                      grade=form.cleaned_data.get("grade"))
            if not form.errors else [])
    page = Paginator(rows, GRID_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"campaign": rubric_track.campaign, "track": rubric_track, "form": form,
               "items": form.items if not form.errors else [], "page": page,
               "total": len(rows), "query": _query_without_page(request),
               "qid": form.cleaned_data.get("qid"), "grades": range(6)}
    return render(request, "frontend/organiser/grid.html", context,
                  status=400 if form.errors else 200)


@login_required
def verify_grading(request: HttpRequest, slug: str, track: str) -> HttpResponse:
    """Each item's extracted answers over the query's pool, grouped by grade."""
    rubric_track = _rubric_track(request, slug, track)
    form = _selection(request, rubric_track)
    answers = (answers_by_grade(track=rubric_track, qid=form.cleaned_data["qid"],
                                items=form.items, grade=form.cleaned_data.get("grade"))
               if not form.errors else [])
    context = {"campaign": rubric_track.campaign, "track": rubric_track, "form": form,
               "answers": answers, "qid": form.cleaned_data.get("qid")}
    return render(request, "frontend/organiser/verify_grading.html", context,
                  status=400 if form.errors else 200)


@login_required
def passage(request: HttpRequest, slug: str, track: str) -> HttpResponse:
    """A passage (?qid=&docid=): its text, who retrieved it, its grades on the query's
    items."""
    rubric_track = _rubric_track(request, slug, track)
    qid, docid = request.GET.get("qid", ""), request.GET.get("docid", "")
    # No id holds NUL (the run formats refuse it), and PostgreSQL cannot even be asked.
    nameless = "\x00" in qid or "\x00" in docid
    view = None if nameless else passage_view(track=rubric_track, qid=qid, docid=docid)
    if view is None or view.text is None:
        raise Http404(NO_PASSAGE.format(docid=docid, qid=qid))
    context = {"campaign": rubric_track.campaign, "track": rubric_track, "passage": view}
    return render(request, "frontend/organiser/passage.html", context)


@login_required
def grade_edit(request: HttpRequest, slug: str, track: str, judgment_id: int) -> HttpResponse:
    """Post-edit one rubric grade (GET: the judgment, its history and the form). The edit
    applies wherever the same passage text was graded on the same item text, is audited, and
    queues scoring once it commits."""
    rubric_track = _rubric_track(request, slug, track)
    if judgment_id >= 2**63:  # no judgment (and past SQLite's integers)
        raise Http404("No such grade.")
    judgment = get_object_or_404(Judgment, pk=judgment_id, campaign=rubric_track.campaign,
                                 kind=JudgmentKind.RUBRIC)
    form = GradeEditForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        grade = form.cleaned_data["grade"]
        try:
            judgment_edit(judgment=judgment, user=_user(request), changes={"grade": grade},
                          reason=judgment.reason, note=form.cleaned_data["note"])
        except EditRefused as refused:
            form.add_error(refused.field if refused.field in form.fields else None,
                           str(refused))
        else:
            messages.success(request, EDITED.format(grade=grade,
                                                    uses=judgment.grade_links.count()))
            back = request.POST.get("next", "")
            if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
                return redirect(back)
            return redirect("rubric-grade", slug=slug, track=track, judgment_id=judgment.pk)
    context = {"campaign": rubric_track.campaign, "track": rubric_track,
               "judgment": judgment, "form": form,
               "uses": judgment.grade_links.select_related("item").order_by("qid", "docid"),
               "history": judgment.edits.select_related("edited_by")}
    return render(request, "frontend/organiser/grade.html", context,
                  status=400 if form.errors else 200)


@login_required
def testbank_gaps(request: HttpRequest, slug: str, track: str) -> HttpResponse:
    """Missing from the test bank and spurious items, from the track's current manual qrels;
    without them the page says what it needs instead of showing empty lists."""
    rubric_track = _rubric_track(request, slug, track)
    reference = reference_current(track=rubric_track)
    qrels = reference.qrels if reference is not None else None
    context: dict[str, Any] = {"campaign": rubric_track.campaign, "track": rubric_track,
                               "reference": reference, "has_qrels": qrels is not None}
    status = 200
    if reference is not None and qrels is not None:
        form = GapsFilterForm(request.GET, qids=sorted(qrels))
        context["form"] = form
        if form.is_valid():
            context["gaps"] = manual_qrels_gaps(
                track=rubric_track, qrels=qrels, relevant_level=reference.relevant_level,
                qid=form.cleaned_data["qid"] or None)
        else:
            status = 400
    return render(request, "frontend/organiser/testbank_gaps.html", context, status=status)
