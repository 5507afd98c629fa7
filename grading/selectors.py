"""Reads for grading: marked runs, progress, judgments and who they affect."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet

from campaign.models import Campaign, TrackKind
from grading.models import AnswerEvaluation, JudgeSlot, Judgment, NuggetEntailment
from grading.review import doubt_filter, is_doubtful
from submissions.formats.ac_run import NuggetRecord as NuggetLine
from submissions.formats.common import PassageKey
from submissions.formats.marked_ac_run import (
    BOGUS,
    NONRELEVANT,
    RELEVANT,
    Mark,
    MarkedAnswerRecord,
    MarkedNugget,
)
from submissions.models import AnswerRecord, NuggetRecord, Run, RunStatus


@dataclass(frozen=True)
class JudgedAnswerBlock:
    """One question of a graded AC run: the marked block and the answer verdict.

    `correct` is None (and marks incomplete) while a judgment needs review.
    """

    marked: MarkedAnswerRecord
    correct: bool | None
    complete: bool


def marked_run(*, run: Run, slot: str = JudgeSlot.OFFICIAL) -> list[JudgedAnswerBlock]:
    """The marked AC run (DESIGN.md section 4) with each answer's verdict.

    A nugget is B when its passage does not entail it, R when entailed and named
    relevant by an answer judged correct, N otherwise. Edited labels win.
    """
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
        verdict = verdicts.get(answer.pk)
        correct = None if verdict is None else bool(verdict["correct"])
        relevant = set(verdict.get("relevant", [])) if verdict and correct else set()  # type: ignore[call-overload]
        marked: list[MarkedNugget] = []
        complete = verdict is not None
        for nugget in nuggets_of.get(answer.pk, []):
            state = entailed.get(nugget.pk)
            mark: Mark
            if state is False:
                mark = BOGUS
            elif state is True:
                mark = RELEVANT if nugget.nugget_num in relevant else NONRELEVANT
            else:
                complete = False
                mark = NONRELEVANT  # placeholder; the block is flagged incomplete
            line = NuggetLine(answer.qid, nugget.nugget_num,
                              PassageKey(nugget.pr_run_name, nugget.passage_rank), nugget.text)
            marked.append(MarkedNugget(line, mark))
        blocks.append(JudgedAnswerBlock(
            marked=MarkedAnswerRecord(answer.qid, answer.answer, answer.confidence,
                                      tuple(marked)),
            correct=correct, complete=complete,
        ))
    return blocks


@dataclass(frozen=True)
class RunProgress:
    run: Run
    nuggets: int
    nuggets_judged: int
    answers: int
    answers_judged: int
    needs_review: int

    @property
    def done(self) -> int:
        return self.nuggets_judged + self.answers_judged

    @property
    def total(self) -> int:
        return self.nuggets + self.answers


def ac_runs(*, campaign: Campaign) -> QuerySet[Run]:
    """The current, accepted AC runs of a campaign: what grading works on."""
    return Run.objects.filter(
        track__campaign=campaign, track__kind=TrackKind.AC, is_current=True,
    ).exclude(status__in=[RunStatus.INVALID, RunStatus.RECEIVED]).select_related("team", "track")


def grading_progress(*, campaign: Campaign) -> list[RunProgress]:
    """Judgments done/total per AC run, and how many wait for review."""
    runs = ac_runs(campaign=campaign).annotate(
        n_nuggets=Count("nuggets", distinct=True),
        n_answers=Count("answers", distinct=True),
    ).order_by("name")
    progress = []
    for run in runs:
        official = Q(slot=JudgeSlot.OFFICIAL)
        nugget_links = NuggetEntailment.objects.filter(official, nugget__run=run)
        answer_links = AnswerEvaluation.objects.filter(official, answer__run=run)
        review = (
            nugget_links.filter(judgment__llm_label__isnull=True,
                                judgment__edited_label__isnull=True).count()
            + answer_links.filter(judgment__llm_label__isnull=True,
                                  judgment__edited_label__isnull=True).count()
        )
        progress.append(RunProgress(
            run=run, nuggets=run.n_nuggets,
            nuggets_judged=nugget_links.count(), answers=run.n_answers,
            answers_judged=answer_links.count(), needs_review=review,
        ))
    return progress


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
    """A judgment where it is used: one nugget record or one answer of one run."""

    judgment: Judgment
    run: str
    qid: str
    nugget_num: int | None
    doubtful: bool = False


#: How `judgment_items` may order: by run, question and nugget; or least sure first.
JUDGMENT_ORDERS = ("run", "doubt")


def _doubt_order(item: JudgmentItem) -> tuple[bool, float, int]:
    # Least sure first; unmeasured after every measured one; then the judgment's id.
    confidence = item.judgment.confidence
    return (confidence is None, 0.0 if confidence is None else confidence, item.judgment.pk)


def judgment_items(
    *, campaign: Campaign, run: str | None = None, kind: str | None = None,
    edited: bool | None = None, needs_review: bool | None = None, qid: str | None = None,
    slot: str = JudgeSlot.OFFICIAL, disagreement: bool = False, label: bool | None = None,
    doubtful: bool | None = None, order: str = "run",
) -> list[JudgmentItem]:
    """Judgments of a campaign's current runs, one item per use, filtered as asked.

    `label` keeps the uses whose counting label (entailed, or correct) is that value;
    `doubtful` those the judge was (or was not) less sure of than `campaign.review_below`.
    `order` is one of JUDGMENT_ORDERS: "doubt" puts the least sure first, the unmeasured
    after every measured one, then by judgment id (each judgment's uses stay together).
    """
    if order not in JUDGMENT_ORDERS:
        raise ValueError(f"order must be one of {JUDGMENT_ORDERS}, found {order!r}")
    below = doubt_filter(campaign=campaign, via="judgment__")

    def narrowed(links: QuerySet[Any], prefix: str) -> QuerySet[Any]:
        links = links.filter(**{f"{prefix}__run__track__campaign": campaign,
                                f"{prefix}__run__is_current": True, "slot": slot})
        if run:
            links = links.filter(**{f"{prefix}__run__name": run})
        if qid:
            links = links.filter(**{f"{prefix}__qid": qid})
        if edited is not None:
            links = links.filter(judgment__edited_label__isnull=not edited)
        if doubtful is not None:
            # `exclude` keeps the unmeasured (NULL) confidences: they are not doubtful.
            links = links.filter(below) if doubtful else links.exclude(below)
        if needs_review is not None:
            unlabelled = Q(judgment__llm_label__isnull=True, judgment__edited_label__isnull=True)
            links = links.filter(unlabelled) if needs_review else links.exclude(unlabelled)
        return links.select_related("judgment", f"{prefix}__run")

    items: list[JudgmentItem] = []
    if kind in (None, "entailment"):
        for link in narrowed(NuggetEntailment.objects.all(), "nugget").order_by(
            "nugget__run__name", "nugget__qid", "nugget__nugget_num"
        ):
            items.append(JudgmentItem(
                link.judgment, link.nugget.run.name, link.nugget.qid, link.nugget.nugget_num,
                doubtful=is_doubtful(judgment=link.judgment, campaign=campaign)))
    if kind in (None, "answer"):
        for link in narrowed(AnswerEvaluation.objects.all(), "answer").order_by(
            "answer__run__name", "answer__qid"
        ):
            items.append(JudgmentItem(
                link.judgment, link.answer.run.name, link.answer.qid, None,
                doubtful=is_doubtful(judgment=link.judgment, campaign=campaign)))
    if label is not None:
        items = [item for item in items
                 if (item.judgment.label or {}).get(LABEL_FIELD[item.judgment.kind]) is label]
    if disagreement:
        items = [item for item in items if _judges_disagree(item)]
    if order == "doubt":
        items.sort(key=_doubt_order)  # stable: a judgment's uses keep run and qid order
    return items


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
    from scoring.measures.stats import cohen_kappa

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
                                        f"{record}__run__is_current": True})
        official = _labels_by_record(links.filter(slot=JudgeSlot.OFFICIAL), record)
        second = _labels_by_record(links.filter(slot=JudgeSlot.SECOND), record)
        pairs = [(bool(official[key][field]), bool(label[field]))  # type: ignore[index]
                 for key, label in second.items()
                 if label is not None and official.get(key) is not None]
        if second:
            result.append(_agreement(kind, "official vs second judge", pairs))
        # Every judgment the LLM labelled, against the label that counts (edited or not).
        labelled = Judgment.objects.filter(campaign=campaign, kind=kind,
                                           llm_label__isnull=False)
        edits: list[tuple[bool, bool]] = []
        for llm, edited in labelled.values_list("llm_label", "edited_label"):
            said: dict[str, Any] = llm or {}
            counts: dict[str, Any] = edited if edited is not None else said
            edits.append((bool(said.get(field)), bool(counts.get(field))))
        if edits:
            result.append(_agreement(kind, "LLM vs organisers' edits", edits))
    return result


def _judges_disagree(item: JudgmentItem) -> bool:
    """Does the second judge label this use differently from the official judgment?"""
    kind = item.judgment.kind
    field = LABEL_FIELD[kind]
    model: Any = NuggetEntailment if kind == "entailment" else AnswerEvaluation
    record = "nugget" if kind == "entailment" else "answer"
    links: QuerySet[Any] = model.objects.filter(**{
        "slot": JudgeSlot.SECOND, f"{record}__run__name": item.run,
        f"{record}__run__is_current": True, f"{record}__qid": item.qid,
        f"{record}__run__track__campaign": item.judgment.campaign_id,
    })
    if kind == "entailment":
        links = links.filter(nugget__nugget_num=item.nugget_num)
    second = links.select_related("judgment").first()
    if second is None or second.judgment.label is None or item.judgment.label is None:
        return False
    return bool(second.judgment.label[field]) != bool(item.judgment.label[field])
