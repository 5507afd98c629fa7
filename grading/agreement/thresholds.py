"""The guarantee's thresholds per kind, from the people's labels of a campaign's blind
samples: what decides, kind by kind, whether a judgment stands or goes to a person."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from campaign.models import Campaign, Track, TrackKind
from grading.agreement.guarantee import Threshold, Verdict, choose_threshold
from grading.models import BlindItem, JudgmentKind

# A rubric grade counts as "answered" at a track's min_grade or above; without a track
# that says otherwise, at the default's.
DEFAULT_MIN_GRADE = 4


@dataclass(frozen=True)
class LabelledItem:
    """A sampled judgment a person labelled: both labels and how sure the judge was."""

    judgment_id: int
    confidence: float | None  # calibrated where there is a calibration, else raw
    person: dict[str, Any]
    judge: dict[str, Any] | None


def rubric_min_grade(campaign: Campaign) -> int:
    """The grade at which a rubric label counts as "answered" for agreement."""
    track = (Track.objects.filter(campaign=campaign,
                                  kind__in=(TrackKind.RANKING, TrackKind.RESPONSE))
             .order_by("slug").first())
    return track.min_grade if track is not None else DEFAULT_MIN_GRADE


def primary(kind: str, label: dict[str, Any] | None, min_grade: int) -> bool | None:
    """The yes/no a label comes down to: entailed, correct, or a grade >= min_grade."""
    if label is None:
        return None
    if kind == JudgmentKind.ENTAILMENT:
        return bool(label.get("entailed"))
    if kind == JudgmentKind.ANSWER:
        return bool(label.get("correct"))
    grade = label.get("grade")
    return None if grade is None else grade >= min_grade


def labelled_items(*, campaign: Campaign, kind: str) -> list[LabelledItem]:
    """Every labelled blind item of the kind, once per judgment (the latest label)."""
    items = (BlindItem.objects.filter(sample__campaign=campaign, sample__kind=kind,
                                      label__isnull=False)
             .select_related("judgment").order_by("labelled_at", "pk"))
    latest: dict[int, LabelledItem] = {}
    for item in items:
        judgment = item.judgment
        sure = (judgment.calibrated_confidence if judgment.calibrated_confidence is not None
                else judgment.confidence)
        latest[judgment.pk] = LabelledItem(judgment.pk, sure, item.label or {}, judgment.llm_label)
    return list(latest.values())


def verdicts(kind: str, items: list[LabelledItem], min_grade: int) -> list[Verdict]:
    """(confidence, agreed) per item; an unmeasured confidence is the lowest, 0."""
    return [(item.confidence or 0.0,
             primary(kind, item.judge, min_grade) == primary(kind, item.person, min_grade))
            for item in items]


def guarantee_thresholds(*, campaign: Campaign) -> dict[str, Threshold]:
    """Per kind with a labelled blind item, the threshold the guarantee sets (its value
    None where nothing may be accepted); kinds absent keep the review threshold."""
    kinds = sorted(set(BlindItem.objects.filter(sample__campaign=campaign, label__isnull=False)
                       .values_list("sample__kind", flat=True)))
    min_grade = rubric_min_grade(campaign) if JudgmentKind.RUBRIC in kinds else 0
    return {
        kind: choose_threshold(
            verdicts(kind, labelled_items(campaign=campaign, kind=kind), min_grade),
            target=campaign.agreement_target, risk=campaign.agreement_risk)
        for kind in kinds
    }
