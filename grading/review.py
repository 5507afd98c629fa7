"""Where people are needed: the judgments the judge doubted, reviewed or not yet.

A judgment is doubtful when the judge's confidence in its label is under the campaign's
`review_below` (its calibrated confidence where the judge has a calibration: the share
of such labels people agreed with; else its own probability), or when it is a rubric
grade whose reply never parsed (its grade counts as UNPARSED_GRADE, a placeholder no
one decided); it is reviewed once an organiser has edited or confirmed it (a
confirmation is an edit that keeps the label). Only the judgments that the current runs
use count: their records' official labels, and the grades of the passages grading rates
of them (DESIGN.md section 10): those are what leaderboards are computed from.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, Q, QuerySet
from django.db.models.functions import Coalesce
from django.db.models.lookups import LessThan

from campaign.models import Campaign
from grading.models import JudgeSlot, Judgment, JudgmentKind
from grading.rubric_uses import grade_links_used
from submissions.models import Run


def doubt_confidence(via: str = "") -> Coalesce:
    """The confidence the review threshold compares, as a query expression: the
    calibrated one where there is one, else the judge's raw probability."""
    return Coalesce(F(f"{via}calibrated_confidence"), F(f"{via}confidence"))


def is_doubtful(*, judgment: Judgment, campaign: Campaign) -> bool:
    """Was the judge less sure of this label than the campaign's review threshold?

    An unmeasured confidence (a server without token probabilities, or no label at all)
    is not doubt: there is nothing to compare. But a rubric grade without a label is:
    scoring reads it as UNPARSED_GRADE until a person gives one (an R2C2 judgment
    without a label holds its answer back instead, and shows as needing review).
    """
    if judgment.kind == JudgmentKind.RUBRIC and judgment.llm_label is None:
        return True
    sure = (judgment.confidence if judgment.calibrated_confidence is None
            else judgment.calibrated_confidence)
    return sure is not None and sure < campaign.review_below


def doubt_filter(*, campaign: Campaign, via: str = "") -> Q:
    """`is_doubtful` as a query condition, on judgments reached through `via` (e.g.
    "judgment__" from a link); NULL confidences never match it (but unparsed rubric
    grades do)."""
    return (Q(LessThan(doubt_confidence(via), campaign.review_below))
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
    """Official judgments under the campaign's review threshold, reviewed or not."""
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
