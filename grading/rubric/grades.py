"""Writes for RUBRIC grading: grade passages on the test bank, one judgment per (passage text,
item text) shared by every run (docs/rubric.md, "Grading")."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from django.db import transaction

from campaign.kinds import kinds
from campaign.models import Campaign, TestBankItem
from campaign.vocabulary import RubricAnswerCheck
from grading.judge import Judge, RubricInput
from grading.judgment_cache import (
    QUERY_CHUNK,
    GradingProgress,
    Unwatched,
    chunks,
    ensure_judgments,
)
from grading.models import Judgment, JudgmentKind, PassageItemGrade
from grading.work.claims import Claim
from submissions.models import Run, RunStatus
from submissions.selectors import passages_to_grade

TWO_TEXTS = "passage {docid} of query {qid} is given with two different texts"

#: The stricter check wins where a campaign's tracks differ: its grades are shared by
#: every track, so they carry the check of the one that asks most.
_STRICTNESS = (RubricAnswerCheck.NONE, RubricAnswerCheck.KEY, RubricAnswerCheck.LLM)


@dataclass
class RubricGradeReport:
    """What one `rubric_grade` did."""

    passages: int = 0  # distinct (qid, docid) given
    pairs: int = 0  # (passage, current item) pairs, each linked to its judgment
    judged: int = 0  # inputs never judged before: the judge's work (one or two calls each)
    needs_review: int = 0  # pairs whose judgment has no label (reply never parsed)
    without_items: list[str] = field(default_factory=list)  # qids with passages, no items

    @property
    def judge_calls(self) -> int:
        """As the R2C2 report counts them: inputs sent to the judge (an `llm` answer
        check adds a second request to some of them)."""
        return self.judged


def campaign_answer_check(*, campaign: Campaign) -> RubricAnswerCheck:
    """The answer check a campaign's rubric judgments carry: the strictest of its ranking and
    response tracks' (none, key, llm), since grades are shared by every track."""
    checks = {RubricAnswerCheck(track.answer_check) for track in campaign.tracks.all()
              if track.is_rubric and track.answer_check in tuple(RubricAnswerCheck)}
    return max(checks, key=_STRICTNESS.index, default=RubricAnswerCheck.NONE)


def _current_items(campaign: Campaign,
                   only: Collection[int] | None = None) -> dict[str, list[TestBankItem]]:
    """Each query's items as grading uses them: drafts and active ones, not retired
    (of the items `only`, when given)."""
    items: dict[str, list[TestBankItem]] = {}
    current = TestBankItem.objects.filter(campaign=campaign).current()
    if only is not None:
        current = current.filter(pk__in=sorted(only))
    for item in (current.select_related("question")
                 .order_by("question__position", "created_at", "id")):
        items.setdefault(item.question.qid, []).append(item)
    return items


def rubric_grade(
    *, campaign: Campaign, passages: Iterable[tuple[str, str, str]], judge: Judge,
    batch: int = 1024, progress: GradingProgress | None = None,
    only_items: Collection[int] | None = None, claim: Claim | None = None,
) -> RubricGradeReport:
    """Grade each passage `(qid, docid, text)` once on every current item of its query (of
    `only_items`, when given), judging only new inputs and linking each pair to its judgment;
    `JudgeUnavailable` where calls failed, `ClaimLost` once `claim` is lost."""
    progress = progress or Unwatched()
    report = RubricGradeReport()
    check = campaign_answer_check(campaign=campaign)
    items_of = _current_items(campaign, only_items)
    texts: dict[tuple[str, str], str] = {}
    for qid, docid, text in passages:
        if texts.setdefault((qid, docid), text) != text:
            raise ValueError(TWO_TEXTS.format(docid=docid, qid=qid))
    report.passages = len(texts)
    pairs: list[tuple[str, str, TestBankItem]] = []
    inputs: list[RubricInput] = []
    without: set[str] = set()
    for (qid, docid), text in texts.items():
        items = items_of.get(qid)
        if not items:
            without.add(qid)
            continue
        for item in items:
            pairs.append((qid, docid, item))
            inputs.append(RubricInput(
                passage=text, item=item.text, item_text_hash=item.text_hash,
                target=item.target, answer_check=check,
                answers=tuple(item.answers) if check != RubricAnswerCheck.NONE else ()))
    report.without_items = sorted(without)
    judgments, report.judged = ensure_judgments(
        campaign.pk, JudgmentKind.RUBRIC, inputs, judge, batch, progress,
        campaign.review_below, check=claim.check if claim is not None else None)
    with claim.hold() if claim is not None else contextlib.nullcontext():
        _link_grades(campaign, pairs, judgments)
    report.pairs = len(pairs)
    report.needs_review = sum(1 for judgment in judgments if judgment.label is None)
    return report


def rubric_run_grade(
    *, run: Run, judge: Judge, batch: int = 1024, progress: GradingProgress | None = None,
    claim: Claim | None = None,
) -> RubricGradeReport:
    """Grade what a ranking or response run retrieved (`passages_to_grade`) on the test bank; the
    grades are the passages', so another run retrieving them costs no call."""
    passages = [(p.qid, p.docid, p.text) for p in passages_to_grade(run=run)]
    return rubric_grade(campaign=run.track.campaign, passages=passages, judge=judge,
                        batch=batch, progress=progress, claim=claim)


def grade_rubric_part(*, run: Run, judge: Judge, claim: Claim, qids: Collection[str] | None,
                      watch: Callable[[str], AbstractContextManager[GradingProgress]]
                      ) -> RubricGradeReport:
    """Grade a claimed ranking or response run, whole, as the track-kind registry names it. No
    second judge: a grade is a passage's and an item's, shared by every run and track."""
    with watch(run.name) as progress:
        return rubric_run_grade(run=run, judge=judge, progress=progress, claim=claim)


def rubric_items_grade(
    *, campaign: Campaign, items: Collection[int], judge: Judge, batch: int = 1024,
    progress: GradingProgress | None = None,
) -> RubricGradeReport:
    """Grade test-bank `items` (ids; just added or edited) on what the graded, queued and grading
    runs rated for their queries, and only that (docs/rubric.md, "The test bank")."""
    wanted = _current_items(campaign, items)
    runs = (Run.objects.filter(track__campaign=campaign, track__kind__in=kinds(rubric=True))
            .current().filter(status__in=RunStatus.JUDGED | RunStatus.IN_GRADING)
            .select_related("track").order_by("pk"))
    passages = [(p.qid, p.docid, p.text) for run in runs
                for p in passages_to_grade(run=run, qids=set(wanted))] if wanted else []
    return rubric_grade(campaign=campaign, passages=passages, judge=judge, batch=batch,
                        progress=progress, only_items=items)


def _link_grades(campaign: Campaign, pairs: Sequence[tuple[str, str, TestBankItem]],
                 judgments: Sequence[Judgment]) -> None:
    """Point each (passage, item) at its judgment: create, or move a link whose
    judgment changed (an edited item, another judge); leave the others untouched."""
    held: dict[tuple[int, str], int] = {}
    for qids in chunks(sorted({qid for qid, _, _ in pairs}), QUERY_CHUNK):
        held.update({
            (item_id, docid): judgment_id
            for item_id, docid, judgment_id in PassageItemGrade.objects.filter(
                campaign=campaign, qid__in=qids).values_list("item_id", "docid", "judgment_id")
        })
    changed = [
        PassageItemGrade(campaign=campaign, qid=qid, docid=docid, item=item,
                         item_text_hash=item.text_hash, judgment=judgment)
        for (qid, docid, item), judgment in zip(pairs, judgments, strict=True)
        if held.get((item.pk, docid)) != judgment.pk
    ]
    with transaction.atomic():
        # An upsert: another worker grading the same passages may have linked them
        # meanwhile; the same inputs give the same judgments, so either write is right.
        PassageItemGrade.objects.bulk_create(
            changed, batch_size=QUERY_CHUNK, update_conflicts=True,
            unique_fields=["item", "docid"], update_fields=["judgment", "item_text_hash"])
