"""Organiser pages for blind samples: draw one, label it item by item seeing only what the
judge was given, and read on the dashboard how the judge agrees with people."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from campaign.models import Campaign, Role
from campaign.selectors import campaign_role
from campaign.text_fields import NOTE, CleanTextFormField
from campaign.vocabulary import PromptTarget
from frontend import plots
from grading.agreement.cascade import cascade_to_second_judge
from grading.agreement.guarantee import smallest_passing_sample
from grading.agreement.report import KindAgreement, agreement_report
from grading.agreement.samples import (
    MAX_SAMPLE_SIZE,
    SampleRefused,
    blind_item_label,
    blind_sample_draw,
)
from grading.agreement.thresholds import rubric_min_grade
from grading.llm.prompts import RUBRIC_INSTRUCTIONS
from grading.models import BlindItem, BlindSample, Judgment, JudgmentKind
from grading.review.edits import EditRefused

#: The keys of the verdict buttons, per kind (the nuggets' and grades' keys are their numbers).
ENTAILMENT_KEYS = {"y": True, "n": False}
ANSWER_KEYS = {"c": True, "i": False}
SKIP_KEY = "s"
# A line of the judge's grading scale: "5: the passage answers ...".
SCALE_LINE = re.compile(r"^([0-5]): (.+)$", re.MULTILINE)


def _organiser(request: HttpRequest, campaign: Campaign) -> User:
    """The organiser asking; anyone else, signed in or not, finds no such page."""
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise Http404("No such campaign page.")
    assert isinstance(request.user, User)  # only a signed-in user organises
    return request.user


# --- the samples page ----------------------------------------------------------------
class DrawForm(forms.Form):
    kind = forms.ChoiceField(label="Kind of judgment", choices=JudgmentKind.choices)
    size = forms.IntegerField(label="Size", min_value=1, max_value=MAX_SAMPLE_SIZE, initial=50,
                              help_text="judgments to draw (fewer if fewer are left)")
    seed = forms.IntegerField(label="Seed (optional)", required=False, min_value=0,
                              max_value=2**63 - 1,
                              help_text="drawn at random and recorded when left empty")


def blind_samples(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's blind samples and how far each is labelled; a form to draw one."""
    campaign = get_object_or_404(Campaign, slug=slug)
    user = _organiser(request, campaign)
    form = DrawForm(request.POST) if request.method == "POST" else DrawForm()
    if request.method == "POST" and form.is_valid():
        try:
            sample = blind_sample_draw(campaign=campaign, user=user, **form.cleaned_data)
        except SampleRefused as refused:
            field = refused.field if refused.field in form.fields else None
            form.add_error(field, str(refused))
        else:
            return redirect("blind-label", sample_id=sample.pk)
    samples = (BlindSample.objects.filter(campaign=campaign).select_related("created_by")
               .annotate(size=Count("items"),
                         labelled=Count("items", filter=Q(items__label__isnull=False)))
               .order_by("-created_at", "-pk"))
    return render(request, "frontend/organiser/blind_samples.html", {
        "campaign": campaign, "form": form, "samples": samples,
        "smallest": smallest_passing_sample(campaign.agreement_target,
                                            campaign.agreement_risk),
    }, status=400 if form.errors else 200)


# --- the labelling page --------------------------------------------------------------
class NoteForm(forms.Form):
    note = CleanTextFormField(label="Note (optional)", required=False, cap=NOTE, what="note",
                              widget=forms.Textarea(attrs={"rows": 2}))


def _item_at(items: list[BlindItem], position: str | None) -> BlindItem:
    try:
        wanted = int(position or "")
    except ValueError:
        raise Http404("No such item in this sample.") from None
    found = next((item for item in items if item.position == wanted), None)
    if found is None:
        raise Http404("No such item in this sample.")
    return found


def _unlabelled_after(items: list[BlindItem], position: int) -> BlindItem | None:
    """The first unlabelled item after `position`, round to the start; None when every
    other item is labelled."""
    later = ([item for item in items if item.position > position]
             + [item for item in items if item.position < position])
    return next((item for item in later if not item.labelled), None)


def _yes_no(value: str | None) -> bool | str | None:
    """A verdict button's value; anything else as sent, for the edit to refuse."""
    return {"true": True, "false": False}.get(value or "", value)


def _whole(value: str | None) -> int | str | None:
    try:
        return int(value or "")
    except ValueError:
        return value


def _changes(kind: str, data: QueryDict) -> dict[str, Any]:
    """The label a button sends, in the fields a judgment edit takes; the nuggets ticked
    count only with "correct" (an incorrect answer has none relevant)."""
    if kind == JudgmentKind.ENTAILMENT:
        return {"entailed": _yes_no(data.get("entailed"))}
    if kind == JudgmentKind.ANSWER:
        correct = _yes_no(data.get("correct"))
        if correct is True:
            return {"correct": True, "relevant": [_whole(n) for n in data.getlist("relevant")]}
        return {"correct": correct}
    return {"grade": _whole(data.get("grade"))}


def _label_text(kind: str, label: dict[str, Any]) -> str:
    """A person's blind label in words (of a rubric label, only the grade they gave)."""
    if kind == JudgmentKind.ENTAILMENT:
        return "entailed" if label.get("entailed") else "not entailed"
    if kind == JudgmentKind.ANSWER:
        if not label.get("correct"):
            return "incorrect"
        relevant = ", ".join(str(num) for num in label.get("relevant", []))
        return f"correct; relevant nuggets: {relevant or 'none'}"
    return f"grade {label.get('grade')}"


def _scale(target: str) -> list[tuple[int, str]]:
    """The grading scale the judge was given for the item's target, highest grade first."""
    try:
        instructions = RUBRIC_INSTRUCTIONS[PromptTarget(target)]
    except ValueError:
        instructions = RUBRIC_INSTRUCTIONS[PromptTarget.QUESTIONS]
    return [(int(grade), text) for grade, text in SCALE_LINE.findall(instructions)]


def _nuggets(inputs: dict[str, Any], ticked: list[str]) -> list[dict[str, Any]]:
    """The answer's numbered nuggets, each with its key (1..9) and whether it is ticked."""
    return [{"num": n["num"], "text": n["text"], "ticked": str(n["num"]) in ticked,
             "key": str(n["num"]) if 1 <= n["num"] <= 9 else ""}
            for n in inputs.get("nuggets", [])]


def _label_page(request: HttpRequest, sample: BlindSample, items: list[BlindItem],
                item: BlindItem | None, form: NoteForm, ticked: list[str],
                status: int = 200) -> HttpResponse:
    # Only the judge's inputs are read: its label, reasons and the rest stay in the database.
    inputs: dict[str, Any] = (Judgment.objects.values_list("input", flat=True)
                              .get(pk=item.judgment_id) if item is not None else {})
    labelled = sum(1 for i in items if i.labelled)
    skip = None
    if item is not None and len(items) > 1:
        skip = _unlabelled_after(items, item.position) or _item_at(
            items, str(item.position % len(items) + 1))
    return render(request, "frontend/organiser/blind_label.html", {
        "campaign": sample.campaign, "sample": sample, "item": item, "inputs": inputs,
        "total": len(items), "labelled": labelled, "done": labelled == len(items),
        "form": form, "skip": skip,
        "own_label": _label_text(sample.kind, item.label) if item and item.label else None,
        "nuggets": _nuggets(inputs, ticked),
        "scale": _scale(inputs.get("target", "")) if sample.kind == JudgmentKind.RUBRIC else [],
        "skip_key": SKIP_KEY,
    }, status=status)


def blind_label(request: HttpRequest, sample_id: int) -> HttpResponse:
    """One item of a blind sample at a time, the first unlabelled unless `?item=` names
    one; posting a label stores it and moves on to the next unlabelled item."""
    sample = get_object_or_404(BlindSample.objects.select_related("campaign"), pk=sample_id)
    user = _organiser(request, sample.campaign)
    items = list(sample.items.select_related("labelled_by").order_by("position"))
    if request.method != "POST":
        if "item" in request.GET:
            item: BlindItem | None = _item_at(items, request.GET["item"])
        else:
            item = next((i for i in items if not i.labelled), None)
        ticked = [str(n) for n in (item.label or {}).get("relevant", [])] if item else []
        return _label_page(request, sample, items, item, NoteForm(
            initial={"note": item.note if item else ""}), ticked)
    item = _item_at(items, request.POST.get("item"))
    form = NoteForm(request.POST)
    if form.is_valid():
        try:
            blind_item_label(item=item, user=user, changes=_changes(sample.kind, request.POST),
                             note=form.cleaned_data["note"])
        except EditRefused as refused:
            form.add_error(None, f"Not stored: {refused}.")
        else:
            following = _unlabelled_after(items, item.position)
            url = reverse("blind-label", args=[sample.pk])
            return redirect(f"{url}?item={following.position}" if following else url)
    return _label_page(request, sample, items, item, form, request.POST.getlist("relevant"),
                       status=400)


# --- the agreement report on the dashboard -------------------------------------------
@dataclass(frozen=True)
class KindReport:
    """A kind's line of the agreement report, in the words and figures the dashboard shows."""

    line: KindAgreement
    title: str
    yes: str
    no: str
    confusion: list[tuple[str, int, int, int]]  # the person's label; the judge's yes, no, none
    diagram: str  # the reliability diagram's SVG; "" without labelled items


def _words(kind: str, min_grade: int) -> tuple[str, str]:
    if kind == JudgmentKind.ENTAILMENT:
        return "entailed", "not entailed"
    if kind == JudgmentKind.ANSWER:
        return "correct", "incorrect"
    return f"grade {min_grade} or more", f"grade under {min_grade}"


def _diagram(line: KindAgreement) -> str:
    if not line.bins:
        return ""
    bins = [plots.ReliabilityBin(lower=b.low, upper=b.high, count=b.n,
                                 mean_confidence=b.mean_confidence, accuracy=b.agreement)
            for b in line.bins]
    return plots.render(plots.reliability_diagram, f"{line.kind} judgments", bins,
                        ident=f"agreement-{line.kind}", items="label",
                        x_label="judge's confidence (calibrated where fitted)")


def agreement_sections(*, campaign: Campaign) -> list[KindReport]:
    """The agreement report of the campaign, a section per kind."""
    lines = agreement_report(campaign=campaign)
    min_grade = (rubric_min_grade(campaign)
                 if any(line.kind == JudgmentKind.RUBRIC for line in lines) else 0)
    sections = []
    for line in lines:
        yes, no = _words(line.kind, min_grade)
        cells = line.confusion
        confusion = [(word, cells.get(f"human_{person}_judge_true", 0),
                      cells.get(f"human_{person}_judge_false", 0),
                      cells.get(f"human_{person}_judge_none", 0))
                     for word, person in ((yes, "true"), (no, "false"))]
        sections.append(KindReport(line=line, title=JudgmentKind(line.kind).label, yes=yes,
                                   no=no, confusion=confusion, diagram=_diagram(line)))
    return sections


@require_POST
def cascade(request: HttpRequest, slug: str) -> HttpResponse:
    """Let the second judge decide the escalated judgments the guarantee allows it."""
    campaign = get_object_or_404(Campaign, slug=slug)
    _organiser(request, campaign)
    outcome = cascade_to_second_judge(campaign=campaign)
    messages.success(request, f"The second judge decided {outcome.decided} escalated "
                              f"judgment(s); {outcome.withdrawn} earlier decision(s) withdrawn.")
    return redirect(reverse("dashboard", args=[slug]) + "#agreement-report")
