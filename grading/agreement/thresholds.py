"""The guarantee's thresholds per kind, from the people's labels of a campaign's blind
samples: what decides, kind by kind, whether a judgment stands or goes to a person."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from campaign.kinds import kinds
from campaign.models import Campaign, Track
from grading.agreement.guarantee import Threshold, Verdict, choose_threshold
from grading.models import (
    AnswerEvaluation,
    BlindItem,
    JudgeSlot,
    Judgment,
    JudgmentKind,
    NuggetEntailment,
)
from submissions.models import Run

# A rubric grade counts as "answered" at a track's min_grade or above; without a track
# that says otherwise, at the default's.
DEFAULT_MIN_GRADE = 4


@dataclass(frozen=True)
class LabelledItem:
    """A sampled judgment a person labelled: both labels and how sure the judge was."""

    judgment_id: int
    confidence: float  # as the guarantee orders judgments (judge_confidence)
    person: dict[str, Any]
    judge: dict[str, Any] | None


def rubric_min_grade(campaign: Campaign) -> int:
    """The grade at which a rubric label counts as "answered" for agreement."""
    track = (Track.objects.filter(campaign=campaign,
                                  kind__in=kinds(rubric=True))
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
        latest[judgment.pk] = LabelledItem(judgment.pk, judge_confidence(judgment),
                                           item.label or {}, judgment.llm_label)
    return list(latest.values())


def verdicts(kind: str, items: list[LabelledItem], min_grade: int) -> list[Verdict]:
    """(confidence, agreed) per item."""
    return [(item.confidence,
             primary(kind, item.judge, min_grade) == primary(kind, item.person, min_grade))
            for item in items]


def _links(campaign: Campaign, kind: str) -> tuple[Any, str] | None:
    """The use links of a kind in the current runs, and their record's name (None:
    rubric grades, which have no second judge)."""
    model: type[NuggetEntailment | AnswerEvaluation]
    if kind == JudgmentKind.ENTAILMENT:
        model, record = NuggetEntailment, "nugget"
    elif kind == JudgmentKind.ANSWER:
        model, record = AnswerEvaluation, "answer"
    else:
        return None
    return model.objects.filter(**{f"{record}__run__track__campaign": campaign,
                                   f"{record}__run__in": Run.objects.current()}), record


def has_second_judge(*, campaign: Campaign, kind: str) -> bool:
    found = _links(campaign, kind)
    return found is not None and found[0].filter(slot=JudgeSlot.SECOND).exists()


def second_judgments(*, campaign: Campaign, kind: str,
                     officials: Collection[int]) -> dict[int, Judgment]:
    """Per official judgment among `officials`, the second judge's judgment of one of
    its uses in the current runs."""
    found = _links(campaign, kind)
    if found is None:
        return {}
    links, record = found
    places = dict(links.filter(slot=JudgeSlot.OFFICIAL, judgment_id__in=officials)
                  .values_list(f"{record}_id", "judgment_id"))
    second = dict(links.filter(slot=JudgeSlot.SECOND, **{f"{record}_id__in": places})
                  .values_list(f"{record}_id", "judgment_id"))
    judgments = Judgment.objects.in_bulk(set(second.values()))
    return {official: judgments[second[place]] for place, official in places.items()
            if place in second}


def judge_confidence(judgment: Judgment) -> float:
    """The confidence the guarantee orders judgments by: calibrated where there is a
    calibration, else the judge's own probability; unmeasured counts as the lowest, 0."""
    sure = (judgment.calibrated_confidence if judgment.calibrated_confidence is not None
            else judgment.confidence)
    return sure or 0.0


def _risk(campaign: Campaign, kind: str) -> float:
    """The risk each judge is held to: split between the two where a second judge
    labels the kind, so that the cascade as a whole keeps the campaign's (a union
    bound)."""
    judges = 2 if has_second_judge(campaign=campaign, kind=kind) else 1
    return campaign.agreement_risk / judges


def _labelled_kinds(campaign: Campaign) -> list[str]:
    return sorted(set(BlindItem.objects.filter(sample__campaign=campaign, label__isnull=False)
                      .values_list("sample__kind", flat=True)))


def guarantee_thresholds(*, campaign: Campaign) -> dict[str, Threshold]:
    """Per kind with a labelled blind item, the threshold the guarantee sets for the
    official judge (its value None where nothing may be accepted); kinds absent keep
    the review threshold."""
    kinds = _labelled_kinds(campaign)
    min_grade = rubric_min_grade(campaign) if JudgmentKind.RUBRIC in kinds else 0
    return {
        kind: choose_threshold(
            verdicts(kind, labelled_items(campaign=campaign, kind=kind), min_grade),
            target=campaign.agreement_target, risk=_risk(campaign, kind))
        for kind in kinds
    }


def second_thresholds(*, campaign: Campaign,
                      official: dict[str, Threshold]) -> dict[str, Threshold]:
    """Per kind with a second judge, its threshold from the same sample: on the labelled
    items the official judge escalates, at the other half of the risk."""
    chosen = {}
    for kind, threshold in official.items():
        if not has_second_judge(campaign=campaign, kind=kind):
            continue
        escalated = [item for item in labelled_items(campaign=campaign, kind=kind)
                     if threshold.value is None or item.confidence < threshold.value]
        seconds = second_judgments(campaign=campaign, kind=kind,
                                   officials=[item.judgment_id for item in escalated])
        min_grade = rubric_min_grade(campaign) if kind == JudgmentKind.RUBRIC else 0
        pairs = [(judge_confidence(seconds[item.judgment_id]),
                  primary(kind, seconds[item.judgment_id].llm_label, min_grade)
                  == primary(kind, item.person, min_grade))
                 for item in escalated if item.judgment_id in seconds]
        chosen[kind] = choose_threshold(pairs, target=campaign.agreement_target,
                                        risk=_risk(campaign, kind))
    return chosen
