"""The judgments list's query parameters, one FilterSet for the API and the review page: they
parse the parameters and hand them to `grading.selectors.judgment_uses` (docs/review.md)."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from django.http import QueryDict

from campaign.models import Campaign
from grading.models import JudgmentKind
from grading.review.judgments import JUDGMENT_ORDERS, judgment_uses
from grading.selectors import graded_runs
from infrastructure.query_params import FlagCheckbox, FlagField

BAD_KIND = "expected entailment, answer or rubric, found %(value)r"
BAD_ORDER = f"expected {' or '.join(JUDGMENT_ORDERS)}, found %(value)r"


class FlagFilter(django_filters.BooleanFilter):
    """A yes/no parameter, parsed as every other one is (infrastructure.query_params)."""

    field_class = FlagField


class GradeFilter(django_filters.NumberFilter):
    """A rubric grade: a whole number 0..5 (a form error names anything else)."""

    field_class = forms.IntegerField


class JudgmentFilter(django_filters.FilterSet):
    """The judgments API's filters; `qs` is the matching uses, ordered, ready to paginate."""

    run = django_filters.CharFilter(label="Run")
    qid = django_filters.CharFilter(label="Question (qID)", max_length=64)
    kind = django_filters.ChoiceFilter(
        label="Kind", empty_label="Any", error_messages={"invalid_choice": BAD_KIND},
        choices=[(JudgmentKind.ENTAILMENT, "Nugget entailment"),
                 (JudgmentKind.ANSWER, "Answer evaluation"),
                 (JudgmentKind.RUBRIC, "Rubric grade")])
    label = FlagFilter(label="Label (entailed / correct)")
    grade = GradeFilter(label="Rubric grade (0..5)", min_value=0, max_value=5)
    needs_review = FlagFilter(label="Needs review")
    edited = FlagFilter(label="Edited by an organiser")
    disagreement = FlagFilter(label="Second judge disagrees")
    doubtful = FlagFilter(label="Doubtful")
    escalated = FlagFilter(label="Escalated by the agreement guarantee")
    reviewed = FlagFilter(label="Reviewed (edited, confirmed or blind-labelled)")
    to_review = FlagFilter(label="Waits for a person (doubtful or unlabelled, not reviewed)")
    order = django_filters.ChoiceFilter(
        label="Order", empty_label=None, error_messages={"invalid_choice": BAD_ORDER},
        choices=[("doubt", "Least sure first"), ("run", "Run, question, nugget")])

    #: The order when none is asked for.
    default_order = "run"

    def __init__(self, data: QueryDict | dict[str, Any], *, campaign: Campaign) -> None:
        self.campaign = campaign
        # Bound even when empty, so that an empty query is "no filter", not "unfiltered
        # base queryset"; the base is every use, in the default order.
        super().__init__(data, queryset=judgment_uses(campaign=campaign,
                                                      order=self.default_order))

    def selection(self) -> dict[str, Any]:
        """The valid parameters as `judgment_uses` keyword arguments."""
        data = self.form.cleaned_data
        return {
            "run": data.get("run") or None, "qid": data.get("qid") or None,
            "kind": data.get("kind") or None, "label": data.get("label"),
            "grade": data.get("grade"),
            "needs_review": data.get("needs_review"),
            "edited": data.get("edited") if data.get("edited") is not None
            else data.get("reviewed"),
            "doubtful": data.get("doubtful"), "escalated": data.get("escalated"),
            "to_review": data.get("to_review"),
            # Only a yes filters: "disagreement=false" is the whole list, as no value is.
            "disagreement": data.get("disagreement") is True,
            "order": data.get("order") or self.default_order,
        }

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        # The base is a UNION, which cannot be narrowed: the selector builds it anew.
        return judgment_uses(campaign=self.campaign, **self.selection())


class ReviewQueueFilter(JudgmentFilter):
    """The organiser review page's form: one queue (what waits for a person) and filters
    on it, the least sure first unless asked otherwise; the runs to choose from in a list."""

    to_review = FlagFilter(label="Waits for a person", widget=FlagCheckbox())
    doubtful = FlagFilter(label="Doubtful (under the threshold)", widget=FlagCheckbox())
    needs_review = FlagFilter(label="No label (the reply never parsed)", widget=FlagCheckbox())
    disagreement = FlagFilter(label="Second judge disagrees", widget=FlagCheckbox())

    default_order = "doubt"
    filters: dict[str, django_filters.Filter]
    #: The page's fields, in its order; the API's other filters stay the API's.
    fields_shown = ("to_review", "kind", "run", "qid", "doubtful", "needs_review",
                    "disagreement", "label", "grade", "reviewed", "order")

    def __init__(self, data: QueryDict | dict[str, Any], *, campaign: Campaign) -> None:
        super().__init__(data, campaign=campaign)
        self.filters = {name: self.filters[name] for name in self.fields_shown}
        names = graded_runs(campaign=campaign).order_by("name").values_list("name", flat=True)
        self.filters["run"].extra["widget"] = forms.Select(
            choices=[("", "Any"), *((name, name) for name in names)])
