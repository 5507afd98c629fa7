"""The agreement report: per kind, how the judge fared against people's blind labels,
and what the guarantee accepts, escalates and leaves for people."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from django.db.models import QuerySet

from campaign.models import Campaign
from grading.agreement.guarantee import Threshold, clopper_pearson
from grading.agreement.thresholds import (
    LabelledItem,
    guarantee_thresholds,
    labelled_items,
    primary,
    rubric_min_grade,
    second_thresholds,
)
from grading.models import Judgment, JudgmentKind
from grading.review.queue import doubt_filter, escalation_filter, official_judgments
from grading.validation.figures import agreement

# Bins of the judge's confidence for "is it informative?": their lower edges, the ten
# equal-width bins of the calibration error (the last one holds 1.0).
BIN_EDGES = tuple(k / 10 for k in range(10))
NO_SAMPLE = "no blind sample of this kind is labelled: the review threshold decides"


@dataclass(frozen=True)
class ConfidenceBin:
    low: float
    high: float
    n: int
    agreed: int
    mean_confidence: float

    @property
    def agreement(self) -> float:
        return self.agreed / self.n


@dataclass(frozen=True)
class KindAgreement:
    """One kind's line of the report."""

    kind: str
    n: int
    agreed: int
    interval: tuple[float, float] | None
    kappa: float | None
    confusion: dict[str, int]
    bins: tuple[ConfidenceBin, ...]
    relevant_sets: tuple[int, int] | None  # answers: (n, exact relevant sets agreed)
    threshold: Threshold | None  # None: not under the guarantee (no labelled sample)
    second: Threshold | None  # the second judge's, where one labels the kind
    judgments: int
    accepted: int  # stand under the guarantee, no person involved
    escalated: int  # need a person: under the threshold (or the review threshold)
    unreviewed: int  # escalated, and no person has settled them yet
    by_people: int  # settled by a person: edited, confirmed or blind-labelled
    by_second_judge: int  # escalated, and decided by the second judge under the guarantee

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.n if self.n else None

    @property
    def coverage(self) -> float | None:
        return self.accepted / self.judgments if self.judgments else None

    @property
    def reason(self) -> str:
        return NO_SAMPLE if self.threshold is None else self.threshold.reason


def _bins(kind: str, items: list[LabelledItem], min_grade: int) -> tuple[ConfidenceBin, ...]:
    edges = (*BIN_EDGES, float("inf"))
    bins = []
    for low, high in pairwise(edges):
        inside = [item for item in items if low <= item.confidence < high]
        if inside:
            agreed = sum(primary(kind, i.judge, min_grade) == primary(kind, i.person, min_grade)
                         for i in inside)
            bins.append(ConfidenceBin(low, min(high, 1.0), len(inside), agreed,
                                      sum(i.confidence for i in inside) / len(inside)))
    return tuple(bins)


def _relevant_sets(items: list[LabelledItem]) -> tuple[int, int]:
    def relevant(label: dict[str, Any] | None) -> list[int]:
        return sorted((label or {}).get("relevant", []))
    return len(items), sum(relevant(i.judge) == relevant(i.person) for i in items)


@dataclass(frozen=True)
class _Decided:
    """Who decides a kind's official judgments: what needs a person, and the counts."""

    needs_person: QuerySet[Judgment]  # escalated, or under the review threshold
    accepted: int
    by_people: int
    by_second_judge: int


def _decided(official: QuerySet[Judgment], *, campaign: Campaign, kind: str,
             threshold: Threshold | None) -> _Decided:
    """`official` (one kind's judgments) split by who decides them."""
    if threshold is None:  # the kind is not under the guarantee: the review threshold
        needs_person = official.filter(doubt_filter(campaign=campaign, thresholds={}))
    else:
        needs_person = official.filter(escalation_filter(
            campaign=campaign, thresholds={kind: threshold.value}))
    edited = official.filter(edited_label__isnull=False)
    by_second_judge = edited.filter(decided_by_second_judge=True).count()
    accepted = 0 if threshold is None else (
        official.exclude(pk__in=needs_person.values("pk"))
        .filter(edited_label__isnull=True).count())
    return _Decided(needs_person, accepted, edited.count() - by_second_judge, by_second_judge)


def kind_agreement(*, campaign: Campaign, kind: str, threshold: Threshold | None,
                   second: Threshold | None = None) -> KindAgreement:
    min_grade = rubric_min_grade(campaign) if kind == JudgmentKind.RUBRIC else 0
    items = labelled_items(campaign=campaign, kind=kind)
    figures = agreement([(bool(primary(kind, i.person, min_grade)),
                          primary(kind, i.judge, min_grade)) for i in items])
    official = official_judgments(campaign=campaign).filter(kind=kind)
    decided = _decided(official, campaign=campaign, kind=kind, threshold=threshold)
    return KindAgreement(
        kind=kind, n=figures.items, agreed=figures.agreed,
        interval=clopper_pearson(figures.agreed, figures.items) if items else None,
        kappa=figures.kappa, confusion=figures.confusion,
        bins=_bins(kind, items, min_grade),
        relevant_sets=_relevant_sets(items) if kind == JudgmentKind.ANSWER else None,
        threshold=threshold, second=second, judgments=official.count(),
        accepted=decided.accepted, escalated=decided.needs_person.count(),
        unreviewed=decided.needs_person.filter(edited_label__isnull=True).count(),
        by_people=decided.by_people, by_second_judge=decided.by_second_judge)


def agreement_report(*, campaign: Campaign) -> list[KindAgreement]:
    """A line per kind the campaign's runs have judgments of, or a sample of."""
    thresholds = guarantee_thresholds(campaign=campaign)
    seconds = second_thresholds(campaign=campaign, official=thresholds)
    present = set(official_judgments(campaign=campaign).values_list("kind", flat=True))
    kinds = [kind for kind in JudgmentKind.values if kind in present or kind in thresholds]
    return [kind_agreement(campaign=campaign, kind=kind, threshold=thresholds.get(kind),
                           second=seconds.get(kind))
            for kind in kinds]


def report_json(line: KindAgreement, campaign: Campaign) -> dict[str, Any]:
    """A kind's line as the API and the published snapshot give it."""
    threshold = line.threshold
    return {
        "n": line.n, "agreement": line.agreement,
        "interval": list(line.interval) if line.interval else None,
        "kappa": line.kappa, "confusion": line.confusion,
        "bins": [{"low": b.low, "high": b.high, "n": b.n, "agreement": b.agreement,
                  "mean_confidence": b.mean_confidence} for b in line.bins],
        "relevant_sets": ({"n": line.relevant_sets[0], "agreed": line.relevant_sets[1]}
                          if line.relevant_sets else None),
        "guaranteed": threshold is not None,
        "threshold": threshold.value if threshold else None,
        "reason": line.reason,
        "more_labels": threshold.more_labels if threshold else None,
        "tests": [{"threshold": t.threshold, "n": t.n, "disagreements": t.disagreements,
                   "p_value": t.p_value, "passed": t.passed}
                  for t in (threshold.tests if threshold else ())],
        "second_threshold": line.second.value if line.second else None,
        "second_reason": line.second.reason if line.second else None,
        "judgments": line.judgments, "coverage": line.coverage, "accepted": line.accepted,
        "escalated": line.escalated, "unreviewed": line.unreviewed,
        "by_people": line.by_people, "by_second_judge": line.by_second_judge,
        "target": campaign.agreement_target, "risk": campaign.agreement_risk,
    }


def label_provenance(*, campaign: Campaign, runs: Any) -> dict[str, Any]:
    """How the labels of `runs` were decided, per kind: accepted under the guarantee
    (with its terms), left to the judge (no guarantee, or forced over), or by people."""
    thresholds = guarantee_thresholds(campaign=campaign)
    seconds = second_thresholds(campaign=campaign, official=thresholds)
    used = official_judgments(campaign=campaign, runs=runs)
    provenance: dict[str, Any] = {}
    for kind in sorted(set(used.values_list("kind", flat=True))):
        official = used.filter(kind=kind)
        threshold = thresholds.get(kind)
        decided = _decided(official, campaign=campaign, kind=kind, threshold=threshold)
        guarantee = None
        if threshold is not None:
            second = seconds.get(kind)
            guarantee = {"target": campaign.agreement_target, "risk": campaign.agreement_risk,
                         "sample": len(labelled_items(campaign=campaign, kind=kind)),
                         "threshold": threshold.value,
                         "second_threshold": second.value if second else None}
        total = official.count()
        provenance[kind] = {
            "judgments": total, "accepted": decided.accepted, "by_people": decided.by_people,
            "by_second_judge": decided.by_second_judge,
            "by_judge": total - decided.accepted - decided.by_people - decided.by_second_judge,
            "guarantee": guarantee,
            "review_below": None if guarantee else campaign.review_below,
        }
    return provenance
