"""Organiser pages for judge validation: start one on the dev set, read one item by item."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from frontend import plots
from frontend.organiser import _organiser_campaign, _user
from grading.models import JudgeValidation
from grading.tasks import validate_judge
from grading.validation.labelled import DEV_SET, read_labelled_set
from grading.validation.runner import FOLDS
from infrastructure.queueing import queue_task

JUDGES = ("official", "second")


@login_required
@require_POST
def start_validation(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    judge = request.POST.get("judge", "official")
    if judge not in JUDGES:
        messages.error(request, f"No judge {judge!r}: expected official or second.")
        return redirect("dashboard", slug=slug)
    queue_task(validate_judge.delay, campaign.pk, judge, _user(request).pk,
               work=f"the validation of the {judge} judge", retry="Start it again later.")
    size = len(read_labelled_set(DEV_SET).items)
    messages.success(request, f"Validation of the {judge} judge on the dev set ({size} "
                              "items) queued; its figures appear here when a worker is done.")
    return redirect("dashboard", slug=slug)


PASS_NAMES = ("entailment", "answer_gold", "answer_nuggets")


def _diagrams(validation: JudgeValidation, section: str) -> list[tuple[str, str]]:
    """The reliability diagrams of a pass: the judge's raw confidence, the one through the
    calibration it graded with, and the one refitted on the set's other folds."""
    outcomes = [o for o in validation.outcomes if o["pass"] == section]
    drawn = []
    for key, title in (("confidence", "raw"), ("calibrated_confidence", "calibrated"),
                       ("refit_confidence", "refitted")):
        pairs = [(o[key], float(o["agreed"])) for o in outcomes if o.get(key) is not None]
        if not pairs:
            continue
        bins = plots.reliability_bins([c for c, _ in pairs], [ok for _, ok in pairs])
        drawn.append((title, plots.render(
            plots.reliability_diagram, f"{section}: {title}", bins,
            ident=f"reliability-{section}-{key}", x_label=f"judge's {title} confidence",
            items="label")))
    return drawn


@login_required
def validation_detail(request: HttpRequest, slug: str, validation_id: int) -> HttpResponse:
    campaign = _organiser_campaign(request, slug)
    validation = get_object_or_404(JudgeValidation, pk=validation_id, campaign=campaign)
    misses = [o for o in validation.outcomes if not o["agreed"]]
    return render(request, "frontend/organiser/validation.html", {
        "campaign": campaign, "validation": validation, "misses": misses, "folds": FOLDS,
        "figures": [(name, validation.figures[name], _diagrams(validation, name))
                    for name in PASS_NAMES if name in validation.figures],
    })
