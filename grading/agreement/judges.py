"""How often the judges agree with each other and with the organisers' edits, per kind of
judgment, with Cohen's kappa (the dashboard's figures)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import (
    QuerySet,
)

from campaign.models import Campaign
from grading.models import (
    AnswerEvaluation,
    JudgeSlot,
    Judgment,
    NuggetEntailment,
)
from grading.review.judgments import LABEL_FIELD
from scoring.measures.stats import cohen_kappa
from submissions.models import Run


@dataclass(frozen=True)
class Agreement:
    """How often two sources of labels agree on one kind of judgment (Cohen's kappa)."""

    kind: str
    between: str  # "official vs second judge" or "LLM vs organisers' edits"
    pairs: int
    disagreements: int
    kappa: float | None  # None when there is nothing to compare




def _agreement(kind: str, between: str, pairs: list[tuple[bool, bool]]) -> Agreement:
    kappa = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs]) if pairs else None
    return Agreement(kind=kind, between=between, pairs=len(pairs),
                     disagreements=sum(1 for a, b in pairs if a != b), kappa=kappa)


def _labels_by_record(links: QuerySet[Any], record: str) -> dict[int, dict[str, Any] | None]:
    return {getattr(link, f"{record}_id"): link.judgment.label
            for link in links.select_related("judgment")}


def judge_agreement(*, campaign: Campaign) -> list[Agreement]:
    """Official vs second judge per kind, and LLM labels vs organisers' edits per kind."""
    result = []
    for kind, model, record in (("entailment", NuggetEntailment, "nugget"),
                                ("answer", AnswerEvaluation, "answer")):
        field = LABEL_FIELD[kind]
        links = model.objects.filter(**{f"{record}__run__track__campaign": campaign,
                                        f"{record}__run__in": Run.objects.current()})
        official = _labels_by_record(links.filter(slot=JudgeSlot.OFFICIAL), record)
        second = _labels_by_record(links.filter(slot=JudgeSlot.SECOND), record)
        pairs = [(bool(official[key][field]), bool(label[field]))  # type: ignore[index]
                 for key, label in second.items()
                 if label is not None and official.get(key) is not None]
        if second:
            result.append(_agreement(kind, "official vs second judge", pairs))
        # The judgments a person edited or confirmed, the LLM's label against theirs: no
        # edit, no figure (an unedited label agrees with itself, which says nothing).
        reviewed = Judgment.objects.filter(campaign=campaign, kind=kind,
                                           llm_label__isnull=False,
                                           edited_label__isnull=False,
                                           decided_by_second_judge=False)
        edits = [(bool((llm or {}).get(field)), bool((edited or {}).get(field)))
                 for llm, edited in reviewed.values_list("llm_label", "edited_label")]
        if Judgment.objects.filter(campaign=campaign, kind=kind).exists():
            result.append(_agreement(kind, "LLM vs organisers' edits", edits))
    return result
