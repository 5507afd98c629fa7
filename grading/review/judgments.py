"""The judgments list: every use of a judgment in a campaign with its state, filtered and
ordered in the database, for the API and the review page (docs/review.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db.models import (
    Case,
    CharField,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)

from campaign.models import Campaign
from grading.models import (
    AnswerEvaluation,
    JudgeSlot,
    Judgment,
    NuggetEntailment,
)
from grading.review.queue import (
    doubt_confidence,
    doubt_filter,
    escalation_filter,
    escalation_thresholds,
    is_doubtful,
)
from grading.rubric.uses import fresh_grade_links, grade_links_used
from grading.selectors import counted_grade_is
from submissions.models import Run


@dataclass(frozen=True)
class JudgmentItem:
    """A judgment where it is used: one nugget record or one answer of one run, or one
    passage's grade on one test-bank item (`run` None: shared by every run, see
    `judgment_uses`)."""

    judgment: Judgment
    run: str | None
    qid: str
    nugget_num: int | None
    doubtful: bool = False
    docid: str | None = None
    item_id: str | None = None


#: How judgment uses may be ordered: by run, question and nugget; or least sure first.
JUDGMENT_ORDERS = ("run", "doubt")
# The columns of a use, the same for every kind, so that the link tables' rows can be
# merged (UNION ALL) and ordered and paginated as one list in the database.
_USE_ORDER = {
    # Entailments first, then answers, then rubric grades; each by run, question, nugget
    # (rubric: passage and item).
    "run": ("kind_rank", "run_name", "use_qid", "nugget_num", "use_docid", "use_item_id",
            "use_id"),
    # Least sure first; the unmeasured after every measured one; then by judgment, whose
    # uses stay together in run order.
    "doubt": ("unmeasured", "confidence", "judgment_pk", "run_name", "use_qid", "nugget_num",
              "use_docid", "use_item_id", "use_id"),
}
#: The kinds of use `judgment_uses` lists: the two R2C2 link tables, and rubric grades.
USE_KINDS = ("entailment", "answer", "rubric")
_RUBRIC_RANK = 2
#: The label field of each kind of verdict.
LABEL_FIELD = {"entailment": "entailed", "answer": "correct"}
_USES: dict[str, tuple[Any, str, int]] = {  # kind -> (link model, record, place in "run")
    "entailment": (NuggetEntailment, "nugget", 0),
    "answer": (AnswerEvaluation, "answer", 1),
}


def counted_label_is(field: str, value: bool, *, via: str = "") -> Q:
    """The label that counts (an organiser's edit, else the judge's) has `field` = `value`,
    for judgments reached through `via` (e.g. "judgment__"). An unlabelled judgment matches
    neither value."""
    return (Q(**{f"{via}edited_label__isnull": False, f"{via}edited_label__{field}": value})
            | Q(**{f"{via}edited_label__isnull": True, f"{via}llm_label__{field}": value}))


def _second_judge_disagrees(kind: str) -> Q:
    """The record's second-slot judgment counts the other label than its official one."""
    model, record, _ = _USES[kind]
    field = LABEL_FIELD[kind]
    second = model.objects.filter(**{record: OuterRef(record), "slot": JudgeSlot.SECOND})
    disagrees = Q()
    for official in (True, False):
        other = second.filter(counted_label_is(field, not official, via="judgment__"))
        disagrees |= counted_label_is(field, official, via="judgment__") & Q(Exists(other))
    return disagrees


def judgment_uses(
    *, campaign: Campaign, run: str | None = None, kind: str | None = None,
    edited: bool | None = None, needs_review: bool | None = None, qid: str | None = None,
    slot: str = JudgeSlot.OFFICIAL, disagreement: bool = False, label: bool | None = None,
    doubtful: bool | None = None, order: str = "run", grade: int | None = None,
    escalated: bool | None = None, to_review: bool | None = None,
) -> QuerySet[Any]:
    """Judgments of a campaign's current runs, one row per use, filtered and ordered in the
    database: a lazy queryset to count and slice; `judgment_items` turns a slice into items.
    The filters, orders and rubric uses: docs/review.md, "The judgments list"."""
    if order not in JUDGMENT_ORDERS:
        raise ValueError(f"order must be one of {JUDGMENT_ORDERS}, found {order!r}")
    if kind not in (None, *USE_KINDS):
        raise ValueError(f"kind must be one of {USE_KINDS}, found {kind!r}")
    thresholds = escalation_thresholds(campaign=campaign)
    below = doubt_filter(campaign=campaign, via="judgment__", thresholds=thresholds)
    unlabelled = Q(judgment__llm_label__isnull=True, judgment__edited_label__isnull=True)
    narrowed = partial(_judgment_state, edited=edited, doubtful=doubtful, below=below,
                       needs_review=needs_review, unlabelled=unlabelled, escalated=escalated,
                       to_review=to_review,
                       escalation=escalation_filter(campaign=campaign, via="judgment__",
                                                    thresholds=thresholds))
    no_text = Value(None, output_field=CharField())
    sides = []
    for use_kind, (model, record, rank) in _USES.items():
        if kind not in (None, use_kind) or grade is not None:
            continue
        links = model.objects.filter(**{f"{record}__run__track__campaign": campaign,
                                        f"{record}__run__in": Run.objects.current(),
                                        "slot": slot})
        if run:
            links = links.filter(**{f"{record}__run__name": run})
        if qid:
            links = links.filter(**{f"{record}__qid": qid})
        if label is not None:
            links = links.filter(counted_label_is(LABEL_FIELD[use_kind], label,
                                                  via="judgment__"))
        if disagreement:
            links = links.filter(_second_judge_disagrees(use_kind))
        nugget_num = (F("nugget__nugget_num") if use_kind == "entailment"
                      else Value(None, output_field=IntegerField()))
        links = narrowed(links)
        sides.append(links.values(
            use_id=F("pk"), judgment_pk=F("judgment_id"), kind_rank=Value(rank),
            run_name=F(f"{record}__run__name"), use_qid=F(f"{record}__qid"),
            nugget_num=nugget_num, use_docid=no_text, use_item_id=no_text,
            unmeasured=Case(When(judgment__confidence__isnull=True, then=Value(1)),
                            default=Value(0)),
            confidence=doubt_confidence("judgment__"),
        ))
    rubric_wanted = kind in (None, "rubric") and slot == JudgeSlot.OFFICIAL
    if rubric_wanted and label is None and not disagreement:
        if run:
            # The grades of the passages grading rates of that run (its top `depth` per
            # query, or its segments); each is still listed once, with run null.
            runs = Run.objects.filter(track__campaign=campaign, name=run).current()
            links = grade_links_used(campaign=campaign, runs=runs)
        else:
            links = fresh_grade_links(campaign=campaign)
        if qid:
            links = links.filter(qid=qid)
        if grade is not None:
            links = links.filter(counted_grade_is(grade, via="judgment__"))
        links = narrowed(links)
        sides.append(links.values(
            use_id=F("pk"), judgment_pk=F("judgment_id"), kind_rank=Value(_RUBRIC_RANK),
            run_name=no_text, use_qid=F("qid"),
            nugget_num=Value(None, output_field=IntegerField()), use_docid=F("docid"),
            use_item_id=F("item__item_id"),
            unmeasured=Case(When(judgment__confidence__isnull=True, then=Value(1)),
                            default=Value(0)),
            confidence=doubt_confidence("judgment__"),
        ))
    if not sides:
        # Filters that no kind of use can meet (a grade with kind=entailment, say).
        return _USES["entailment"][0].objects.none().values(
            use_id=F("pk"), judgment_pk=F("judgment_id"), kind_rank=Value(0),
            run_name=no_text, use_qid=no_text,
            nugget_num=Value(None, output_field=IntegerField()), use_docid=no_text,
            use_item_id=no_text, unmeasured=Value(0), confidence=doubt_confidence("judgment__"),
        ).order_by(*_USE_ORDER[order])
    uses = sides[0] if len(sides) == 1 else sides[0].union(*sides[1:], all=True)
    return uses.order_by(*_USE_ORDER[order])


def _judgment_state(links: QuerySet[Any], *, edited: bool | None, doubtful: bool | None,
                    below: Q, needs_review: bool | None, unlabelled: Q,
                    escalated: bool | None, escalation: Q,
                    to_review: bool | None) -> QuerySet[Any]:
    """`links` narrowed by the state of their judgment, as every kind of use is."""
    if to_review is not None:
        waiting = (below | unlabelled) & Q(judgment__edited_label__isnull=True)
        links = links.filter(waiting) if to_review else links.exclude(waiting)
    if escalated is not None:
        links = links.filter(escalation) if escalated else links.exclude(escalation)
    if edited is not None:
        links = links.filter(judgment__edited_label__isnull=not edited)
    if doubtful is not None:
        # `exclude` keeps the unmeasured (NULL) confidences: they are not doubtful.
        links = links.filter(below) if doubtful else links.exclude(below)
    if needs_review is not None:
        links = links.filter(unlabelled) if needs_review else links.exclude(unlabelled)
    return links


def judgment_items(*, campaign: Campaign, uses: Iterable[Mapping[str, Any]]) -> list[JudgmentItem]:
    """The items of some `judgment_uses` rows (a page of them), in their order; their
    judgments are loaded in one query."""
    rows = list(uses)
    judgments = Judgment.objects.in_bulk({row["judgment_pk"] for row in rows})
    thresholds = escalation_thresholds(campaign=campaign)
    return [
        JudgmentItem(judgments[row["judgment_pk"]], row["run_name"], row["use_qid"],
                     row["nugget_num"],
                     doubtful=is_doubtful(judgment=judgments[row["judgment_pk"]],
                                          campaign=campaign, thresholds=thresholds),
                     docid=row["use_docid"], item_id=row["use_item_id"])
        for row in rows
    ]
