"""Where people are needed: the judgments of the current runs that the guarantee escalates or that
fall under `review_below`, reviewed or not (docs/review.md, "What needs a person")."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.db.models.lookups import LessThan

from campaign.models import Campaign
from grading.agreement.thresholds import guarantee_thresholds
from grading.models import JudgeSlot, Judgment, JudgmentKind
from grading.rubric.uses import grade_links_used
from submissions.models import Run


def doubt_confidence(via: str = "") -> Coalesce:
    """The confidence the review threshold compares, as a query expression: the
    calibrated one where there is one, else the judge's raw probability."""
    return Coalesce(F(f"{via}calibrated_confidence"), F(f"{via}confidence"))


def escalation_thresholds(*, campaign: Campaign) -> dict[str, float | None]:
    """The kinds under the guarantee and the confidence each must reach to stand
    (None: nothing stands without a person)."""
    return {kind: threshold.value
            for kind, threshold in guarantee_thresholds(campaign=campaign).items()}


def is_doubtful(*, judgment: Judgment, campaign: Campaign,
                thresholds: dict[str, float | None] | None = None) -> bool:
    """Does this judgment need a person (escalated, or under the review threshold)? An unmeasured
    confidence is no doubt outside the guarantee, and the lowest there is under it."""
    if judgment.kind == JudgmentKind.RUBRIC and judgment.llm_label is None:
        return True
    sure = (judgment.confidence if judgment.calibrated_confidence is None
            else judgment.calibrated_confidence)
    if thresholds is None:
        thresholds = escalation_thresholds(campaign=campaign)
    if judgment.kind in thresholds:
        threshold = thresholds[judgment.kind]
        return threshold is None or (sure or 0.0) < threshold
    return sure is not None and sure < campaign.review_below


def escalation_filter(*, campaign: Campaign, via: str = "",
                      thresholds: dict[str, float | None] | None = None) -> Q:
    """The judgments the guarantee escalates, as a query condition on `via`."""
    if thresholds is None:
        thresholds = escalation_thresholds(campaign=campaign)
    condition = Q(**{f"{via}pk__in": []})
    sure = Coalesce(doubt_confidence(via), Value(0.0))
    for kind, threshold in thresholds.items():
        below = Q() if threshold is None else Q(LessThan(sure, threshold))
        condition |= Q(**{f"{via}kind": kind}) & below
    return condition


def doubt_filter(*, campaign: Campaign, via: str = "",
                 thresholds: dict[str, float | None] | None = None) -> Q:
    """`is_doubtful` as a query condition, on judgments reached through `via` (e.g.
    "judgment__" from a link)."""
    if thresholds is None:
        thresholds = escalation_thresholds(campaign=campaign)
    unguaranteed = (Q(LessThan(doubt_confidence(via), campaign.review_below))
                    & ~Q(**{f"{via}kind__in": list(thresholds)}))
    return (unguaranteed
            | escalation_filter(campaign=campaign, via=via, thresholds=thresholds)
            | Q(**{f"{via}kind": JudgmentKind.RUBRIC, f"{via}llm_label__isnull": True}))


def official_judgments(*, campaign: Campaign,
                       runs: QuerySet[Run] | None = None) -> QuerySet[Judgment]:
    """The judgments the records of `runs` (the current runs unless given) use in the
    official slot, and the fresh grades of the passages grading rates of them."""
    if runs is None:
        runs = Run.objects.filter(track__campaign=campaign).current()
    used = (Q(nugget_links__slot=JudgeSlot.OFFICIAL, nugget_links__nugget__run__in=runs)
            | Q(answer_links__slot=JudgeSlot.OFFICIAL, answer_links__answer__run__in=runs)
            | Q(grade_links__in=grade_links_used(campaign=campaign, runs=runs)))
    ids = Judgment.objects.filter(used, campaign=campaign).values("pk")
    return Judgment.objects.filter(pk__in=ids)


def doubtful_judgments(*, campaign: Campaign,
                       runs: QuerySet[Run] | None = None) -> QuerySet[Judgment]:
    """Official judgments that need a person (escalated, or under the review threshold),
    reviewed or not."""
    return official_judgments(campaign=campaign, runs=runs).filter(
        doubt_filter(campaign=campaign))


@dataclass(frozen=True)
class DoubtCounts:
    threshold: float
    judgments: int
    doubtful: int
    unreviewed: int  # doubtful, and no organiser has edited or confirmed them
    unmeasured: int  # no probability: no logprobs, and no doubt samples asked for


def doubt_counts(*, campaign: Campaign) -> DoubtCounts:
    judgments = official_judgments(campaign=campaign)
    doubtful = doubtful_judgments(campaign=campaign)
    return DoubtCounts(
        threshold=campaign.review_below,
        judgments=judgments.count(),
        doubtful=doubtful.count(),
        unreviewed=doubtful.filter(edited_label__isnull=True).count(),
        # A rubric grade carries no probability (the client measures only true/false
        # verdicts): it is not "unmeasured" for want of logprobs.
        unmeasured=judgments.filter(confidence__isnull=True, llm_label__isnull=False)
        .exclude(kind=JudgmentKind.RUBRIC).count(),
    )
