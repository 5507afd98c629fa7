"""The cascade: what the official judge is too unsure of goes to the second judge where
it is sure enough under the agreement guarantee, and to people only after that."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from campaign.models import Campaign
from grading.agreement.thresholds import (
    guarantee_thresholds,
    judge_confidence,
    second_judgments,
    second_thresholds,
)
from grading.models import Judgment
from grading.review.edits import EditRefused, judgment_edit, judgment_edit_withdraw
from grading.review.queue import escalation_filter, official_judgments

DECIDED = ("Decided by the second judge ({model}): its confidence {sure:.3f} is at or above "
           "its threshold {threshold:.3f} under the agreement guarantee")
WITHDRAWN = ("The second judge's decision is withdrawn: the agreement guarantee no longer "
             "covers it (a new blind label moved the thresholds)")


@dataclass(frozen=True)
class CascadeOutcome:
    decided: int  # escalated judgments the second judge now decides
    withdrawn: int  # earlier decisions the thresholds no longer cover


def fitted_label(judgment: Judgment, label: dict[str, Any]) -> dict[str, Any]:
    """A label from elsewhere (the second judge's, a label file's) as an edit of this
    judgment: relevant nuggets kept to those its judge was shown."""
    if "relevant" not in label:
        return dict(label)
    shown = {nugget["num"] for nugget in judgment.input.get("nuggets", [])}
    return {**label, "relevant": [n for n in label["relevant"] if n in shown]}


def cascade_to_second_judge(*, campaign: Campaign) -> CascadeOutcome:
    """Let the second judge decide the escalated judgments it may, and withdraw the
    decisions the current thresholds no longer allow."""
    official = guarantee_thresholds(campaign=campaign)
    second = second_thresholds(campaign=campaign, official=official)
    cleared: dict[str, float] = {kind: t.value for kind, t in second.items()
                                 if t.value is not None}
    escalated = set(official_judgments(campaign=campaign).filter(
        escalation_filter(campaign=campaign)).values_list("pk", flat=True))
    decisions = list(Judgment.objects.filter(campaign=campaign, decided_by_second_judge=True))
    waiting = list(Judgment.objects.filter(pk__in=escalated, edited_label__isnull=True))
    seconds = {kind: second_judgments(
        campaign=campaign, kind=kind,
        officials=[j.pk for j in (*decisions, *waiting) if j.kind == kind]) for kind in second}

    def covered(judgment: Judgment) -> Judgment | None:
        """The second judgment that may decide this one, if any."""
        other = seconds.get(judgment.kind, {}).get(judgment.pk)
        if other is None or other.llm_label is None or judgment.kind not in cleared:
            return None
        return other if judge_confidence(other) >= cleared[judgment.kind] else None

    withdrawn = 0
    for judgment in decisions:
        if judgment.pk not in escalated or covered(judgment) is None:
            judgment_edit_withdraw(judgment=judgment, note=WITHDRAWN)
            withdrawn += 1
    decided = 0
    for judgment in waiting:
        other = covered(judgment)
        if other is None:
            continue
        try:
            judgment_edit(judgment=judgment, user=None, second_judge=True,
                          changes=fitted_label(judgment, other.llm_label or {}),
                          reason=other.llm_reason, note=DECIDED.format(
                              model=other.judge_model, sure=judge_confidence(other),
                              threshold=cleared[judgment.kind]))
        except EditRefused:
            continue  # a label that does not fit this judgment: people decide it
        decided += 1
    return CascadeOutcome(decided=decided, withdrawn=withdrawn)
