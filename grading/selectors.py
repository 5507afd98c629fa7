"""Reads for grading: marked runs, progress, judgments and who they affect."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import (
    Case,
    CharField,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)

from campaign.models import Campaign, Role, TrackKind
from campaign.selectors import campaign_membership, campaign_role
from grading.llm.rubric import UNPARSED_GRADE
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
from grading.rubric.uses import fresh_grade_links, grade_links_used, rubric_pair_counts
from scoring.measures.stats import cohen_kappa
from submissions.formats.ac_run import NuggetRecord as NuggetLine
from submissions.formats.common import PassageKey
from submissions.formats.marked_ac_run import MarkedAnswerRecord, MarkedNugget, block_marks
from submissions.models import AnswerRecord, NuggetRecord, Run


@dataclass(frozen=True)
class JudgedAnswerBlock:
    """One question of a graded AC run: the marked block and the answer verdict; `correct` is None
    (and the block incomplete) while a judgment needs review."""

    marked: MarkedAnswerRecord
    correct: bool | None
    complete: bool


def marked_run(*, run: Run, slot: str = JudgeSlot.OFFICIAL) -> list[JudgedAnswerBlock]:
    """The marked AC run (docs/formats.md) with each answer's verdict: each block marked B, R or N
    per nugget by `block_marks`, edited labels winning."""
    entailed: dict[int, bool | None] = {}
    for link in NuggetEntailment.objects.filter(nugget__run=run, slot=slot).select_related(
        "judgment"
    ):
        label = link.judgment.label
        entailed[link.nugget_id] = None if label is None else bool(label["entailed"])
    verdicts: dict[int, dict[str, object] | None] = {
        link.answer_id: link.judgment.label
        for link in AnswerEvaluation.objects.filter(answer__run=run, slot=slot)
        .select_related("judgment")
    }
    blocks = []
    nuggets_of: dict[int, list[NuggetRecord]] = {}
    for nugget in NuggetRecord.objects.filter(run=run).order_by("nugget_num"):
        nuggets_of.setdefault(nugget.answer_id, []).append(nugget)
    for answer in AnswerRecord.objects.filter(run=run).order_by("qid"):
        nuggets = nuggets_of.get(answer.pk, [])
        block = block_marks(nugget_nums=[nugget.nugget_num for nugget in nuggets],
                            entailed={nugget.nugget_num: entailed.get(nugget.pk)
                                      for nugget in nuggets},
                            verdict=verdicts.get(answer.pk))
        marked = tuple(
            MarkedNugget(NuggetLine(answer.qid, nugget.nugget_num,
                                    PassageKey(nugget.pr_run_name, nugget.passage_rank),
                                    nugget.text), mark)
            for nugget, mark in zip(nuggets, block.marks, strict=True))
        blocks.append(JudgedAnswerBlock(
            marked=MarkedAnswerRecord(answer.qid, answer.answer, answer.confidence, marked),
            correct=block.correct, complete=block.complete,
        ))
    return blocks


def marked_run_for_user(
    *, run_id: int, user: AbstractBaseUser | AnonymousUser
) -> Run | None:
    """The AC run with an official judgment whose marked version `user` may download, or None for
    "no such run" and "not yours to see" alike: the caller answers one 404 (docs/access.md)."""
    run = (Run.objects.filter(pk=run_id, track__kind=TrackKind.AC)
           .select_related("track__campaign").first())
    if run is None:
        return None
    judged = (NuggetEntailment.objects.filter(nugget__run=run, slot=JudgeSlot.OFFICIAL).exists()
              or AnswerEvaluation.objects.filter(answer__run=run,
                                                 slot=JudgeSlot.OFFICIAL).exists())
    if not judged:
        return None
    campaign = run.track.campaign
    if campaign_role(campaign=campaign, user=user) == Role.ORGANISER:
        return run
    membership = campaign_membership(campaign=campaign, user=user)
    if membership is None or membership.team_id != run.team_id:
        return None
    # Scoring's snapshots, reached through the track: scoring reads grading, not back.
    published = run.track.evaluations.filter(published_at__isnull=False).exists()
    return run if published else None


@dataclass(frozen=True, kw_only=True)
class RunProgress:
    """How far grading a run has got: an AC run counts its nugget and answer judgments;
    a ranking or response run its (passage, current item) pairs graded, over the
    passages grading rates of it."""

    run: Run
    nuggets: int = 0
    nuggets_judged: int = 0
    answers: int = 0
    answers_judged: int = 0
    passages: int = 0
    pairs: int = 0
    pairs_graded: int = 0
    needs_review: int = 0

    @property
    def done(self) -> int:
        return self.nuggets_judged + self.answers_judged + self.pairs_graded

    @property
    def total(self) -> int:
        return self.nuggets + self.answers + self.pairs


#: The kinds of track whose runs are graded (PR runs are scored on derived qrels only).
GRADED_TRACK_KINDS = (TrackKind.AC, TrackKind.RANKING, TrackKind.RESPONSE)


def ac_runs(*, campaign: Campaign) -> QuerySet[Run]:
    """The current, accepted AC runs of a campaign: what the R2C2 pipeline works on."""
    return (Run.objects.filter(track__campaign=campaign).of_kind(TrackKind.AC).current()
            .accepted().select_related("team", "track"))


def graded_runs(*, campaign: Campaign) -> QuerySet[Run]:
    """The current, accepted runs of a campaign that grading works on: AC, ranking and
    response runs."""
    return (Run.objects.filter(track__campaign=campaign, track__kind__in=GRADED_TRACK_KINDS)
            .current().accepted().select_related("team", "track"))


def grading_progress(*, campaign: Campaign) -> list[RunProgress]:
    """Judgments done/total per graded run (AC, ranking, response), and how many wait for review,
    in a constant number of queries however many runs (one per table, grouped by run)."""
    runs = list(graded_runs(campaign=campaign).order_by("name"))
    pairs = rubric_pair_counts(campaign=campaign,
                               runs=[run for run in runs if run.track.is_rubric])
    run_ids = [run.pk for run in runs if run.track.kind == TrackKind.AC]
    nuggets = _count_by_run(NuggetRecord.objects.filter(run__in=run_ids), "run")
    answers = _count_by_run(AnswerRecord.objects.filter(run__in=run_ids), "run")
    unlabelled = Q(judgment__llm_label__isnull=True, judgment__edited_label__isnull=True)
    nugget_links = NuggetEntailment.objects.filter(slot=JudgeSlot.OFFICIAL,
                                                   nugget__run__in=run_ids)
    answer_links = AnswerEvaluation.objects.filter(slot=JudgeSlot.OFFICIAL,
                                                   answer__run__in=run_ids)
    nuggets_judged = _count_by_run(nugget_links, "nugget__run")
    answers_judged = _count_by_run(answer_links, "answer__run")
    review = Counter(_count_by_run(nugget_links.filter(unlabelled), "nugget__run"))
    review.update(_count_by_run(answer_links.filter(unlabelled), "answer__run"))
    return [
        RunProgress(run=run, passages=pairs[run.pk].passages, pairs=pairs[run.pk].pairs,
                    pairs_graded=pairs[run.pk].graded, needs_review=pairs[run.pk].needs_review)
        if run.pk in pairs else
        RunProgress(run=run, nuggets=nuggets.get(run.pk, 0),
                    nuggets_judged=nuggets_judged.get(run.pk, 0),
                    answers=answers.get(run.pk, 0), answers_judged=answers_judged.get(run.pk, 0),
                    needs_review=review[run.pk])
        for run in runs
    ]


def _count_by_run(rows: QuerySet[Any], run: str) -> dict[int, int]:
    """How many of `rows` belong to each run (`run` is the path to the run's id)."""
    return dict(rows.order_by().values_list(run).annotate(n=Count("pk")))


def runs_using(*, judgment: Judgment) -> list[Run]:
    """Every run with a nugget or answer decided by this judgment (what an edit affects)."""
    run_ids = set(
        NuggetEntailment.objects.filter(judgment=judgment).values_list("nugget__run_id", flat=True)
    ) | set(
        AnswerEvaluation.objects.filter(judgment=judgment).values_list("answer__run_id", flat=True)
    )
    return list(Run.objects.filter(pk__in=run_ids).select_related("track__campaign"))


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


# --- RUBRIC grades ------------------------------------------------------------------


def counted_grade(label: Mapping[str, Any] | None) -> int:
    """The grade a rubric label counts for: its `grade`, or UNPARSED_GRADE where there
    is no label (the judge's reply never parsed and no organiser has given one)."""
    return UNPARSED_GRADE if label is None else int(label["grade"])


def counted_grade_is(grade: int, *, via: str = "") -> Q:
    """`counted_grade` = `grade`, as a query condition on judgments reached through `via`."""
    edited = Q(**{f"{via}edited_label__isnull": False, f"{via}edited_label__grade": grade})
    judged = Q(**{f"{via}edited_label__isnull": True, f"{via}llm_label__grade": grade})
    if grade != UNPARSED_GRADE:
        return edited | judged
    return edited | judged | Q(**{f"{via}edited_label__isnull": True,
                                  f"{via}llm_label__isnull": True})


def rubric_grades(
    *, campaign: Campaign, qids: Iterable[str] | None = None
) -> dict[str, dict[str, dict[str, int]]]:
    """grades[qid][docid][item_id]: each passage's counted grade (0..5) on each current item of its
    query, an organiser's edit winning, in one query; stale grades and retired items left out."""
    links = fresh_grade_links(campaign=campaign)
    if qids is not None:
        links = links.filter(qid__in=list(qids))
    grades: dict[str, dict[str, dict[str, int]]] = {}
    rows = links.values_list("qid", "docid", "item__item_id", "judgment__llm_label",
                             "judgment__edited_label")
    for qid, docid, item_id, llm_label, edited_label in rows.iterator():
        label = edited_label if edited_label is not None else llm_label
        grades.setdefault(qid, {}).setdefault(docid, {})[item_id] = counted_grade(label)
    return grades


@dataclass(frozen=True)
class Agreement:
    """How often two sources of labels agree on one kind of judgment (Cohen's kappa)."""

    kind: str
    between: str  # "official vs second judge" or "LLM vs organisers' edits"
    pairs: int
    disagreements: int
    kappa: float | None  # None when there is nothing to compare


LABEL_FIELD = {"entailment": "entailed", "answer": "correct"}


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

