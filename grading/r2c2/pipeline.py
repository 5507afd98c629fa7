"""The R2C2 judge pipeline over an AC run (docs/judging.md): each nugget's entailment by
its cited passage, then each answer with its entailed nuggets, every record linked to
its judgment."""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from campaign.models import Question
from campaign.vocabulary import AnswerCheck
from grading.judge import AnswerInput, EntailmentInput, Judge, JudgeInput, JudgeUnavailable
from grading.judgment_cache import (
    QUERY_CHUNK,
    GradingProgress,
    Unwatched,
    chunks,
    ensure_judgments,
)
from grading.models import (
    AnswerEvaluation,
    JudgeSlot,
    Judgment,
    JudgmentKind,
    NuggetEntailment,
)
from grading.work.claims import Claim
from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run


@dataclass
class GradeReport:
    """What grading one run did: how many judgments it needed and how many it asked for."""

    run: Run
    nuggets: int = 0
    entailment_calls: int = 0
    answers: int = 0
    answers_judged: int = 0
    answer_calls: int = 0
    needs_review: int = 0

    @property
    def judge_calls(self) -> int:
        return self.entailment_calls + self.answer_calls


def _cited_passages(run: Run, nuggets: list[NuggetRecord]) -> dict[tuple[str, str, int], str]:
    """(PRrunname, qID, PassageRank) -> passage text, from the cited runs' current versions."""
    names = {n.pr_run_name for n in nuggets}
    run_ids = dict(
        Run.objects.filter(track__campaign_id=run.track.campaign_id, name__in=names)
        .current().accepted().values_list("id", "name")
    )
    qids = {n.qid for n in nuggets}
    passages: dict[tuple[str, str, int], str] = {}
    rows = PassageRecord.objects.filter(run_id__in=run_ids, qid__in=qids)
    for run_id, qid, rank, text in rows.values_list("run_id", "qid", "rank", "text").iterator():
        passages[(run_ids[run_id], qid, rank)] = text
    return passages


def _link(
    link_model: type[NuggetEntailment] | type[AnswerEvaluation], record_field: str,
    records: Sequence[NuggetRecord] | Sequence[AnswerRecord], judgments: list[Judgment],
    slot: str,
) -> None:
    """Point each record (nugget or answer) at its judgment in `slot` by one upsert on (record,
    slot), so two graders linking the same records at once both succeed, the later standing."""
    manager: Any = link_model.objects
    record_id = f"{record_field}_id"
    existing: dict[int, int] = {}
    for part in chunks([record.pk for record in records], QUERY_CHUNK):
        existing.update(manager.filter(**{f"{record_field}__in": part, "slot": slot})
                        .values_list(record_id, "judgment_id"))
    changed = [
        link_model(**{record_id: record.pk, "slot": slot, "judgment_id": judgment.pk})
        for record, judgment in zip(records, judgments, strict=True)
        if existing.get(record.pk) != judgment.pk
    ]
    manager.bulk_create(changed, batch_size=QUERY_CHUNK, update_conflicts=True,
                        unique_fields=[record_field, "slot"], update_fields=["judgment"])


def run_grade(
    *, run: Run, judge: Judge, slot: str = JudgeSlot.OFFICIAL, batch: int = 1024,
    progress: GradingProgress | None = None, qids: Collection[str] | None = None,
    claim: Claim | None = None,
) -> GradeReport:
    """Grade an AC run with `judge` and link every record to its judgment: entailments, then
    answers with their entailed nuggets; `qids` limits it to a chunk, and `claim` is re-asserted
    by every write (docs/judging.md, "How an input is judged")."""
    progress = progress or Unwatched()
    report = GradeReport(run=run)
    answer_rows = AnswerRecord.objects.filter(run=run)
    nugget_rows = NuggetRecord.objects.filter(run=run)
    if qids is not None:
        answer_rows = answer_rows.filter(qid__in=qids)
        nugget_rows = nugget_rows.filter(qid__in=qids)
    answers = list(answer_rows.order_by("qid"))
    report.answers = len(answers)
    # At most one call per answer; the exact number is planned once entailment is done.
    progress.planned(JudgmentKind.ANSWER, len(answers))
    nuggets = list(nugget_rows.order_by("qid", "nugget_num"))
    check = claim.check if claim is not None else None
    held = claim.hold if claim is not None else contextlib.nullcontext
    passages = _cited_passages(run, nuggets)
    entailment_inputs = [
        EntailmentInput(passage=passages.get((n.pr_run_name, n.qid, n.passage_rank), ""),
                        nugget=n.text)
        for n in nuggets
    ]
    campaign_id = run.track.campaign_id
    # Where the judge doubts, it writes a reason for the organiser who will look.
    explain_below = run.track.campaign.review_below
    entailments, report.entailment_calls = ensure_judgments(
        campaign_id, JudgmentKind.ENTAILMENT, entailment_inputs, judge, batch, progress,
        explain_below, check=check)
    report.nuggets = len(nuggets)

    def link_entailments() -> None:
        with held():
            _link(NuggetEntailment, "nugget", nuggets, entailments, slot)

    entailed_of: dict[int, bool | None] = {}
    for nugget, judgment in zip(nuggets, entailments, strict=True):
        label = judgment.label
        entailed_of[nugget.pk] = None if label is None else bool(label["entailed"])
    report.needs_review = sum(1 for value in entailed_of.values() if value is None)

    track = run.track
    with_gold = track.answer_check in (AnswerCheck.GOLD, AnswerCheck.BOTH)
    questions = {
        q.qid: q for q in Question.objects.filter(
            campaign_id=track.campaign_id, qid__in={answer.qid for answer in answers})
        .prefetch_related("gold_answers")
    }
    nuggets_of: dict[str, list[NuggetRecord]] = {}
    for nugget in nuggets:
        nuggets_of.setdefault(nugget.qid, []).append(nugget)
    ready: list[AnswerRecord] = []
    answer_inputs: list[JudgeInput] = []
    for answer in answers:
        own = nuggets_of.get(answer.qid, [])
        if any(entailed_of[n.pk] is None for n in own):
            continue  # waits for an organiser's decision on a nugget
        question = questions[answer.qid]
        ready.append(answer)
        answer_inputs.append(AnswerInput(
            question=question.text, answer=answer.answer,
            nuggets=tuple((n.nugget_num, n.text) for n in own if entailed_of[n.pk]),
            answer_check=track.answer_check,
            gold_answers=tuple(g.text for g in question.gold_answers.all()) if with_gold else (),
        ))
    # The nuggets are linked while the first answers are judged: the answer step needs
    # their labels, which are in hand, not their links.
    evaluations, report.answer_calls = ensure_judgments(
        campaign_id, JudgmentKind.ANSWER, answer_inputs, judge, batch, progress,
        explain_below, check=check, meanwhile=link_entailments)
    with held():
        _link(AnswerEvaluation, "answer", ready, evaluations, slot)
    report.answers_judged = len(ready)
    report.needs_review += sum(1 for j in evaluations if j.label is None)
    return report


GOLD_ANSWERS_MISSING = (
    "track {track} checks answers against the gold answers (answer_check: {check}), but "
    "no gold answer is loaded for {qids}: give them one (in the campaign file's "
    "gold_answers, loaded again, or in the admin) and grade the run again"
)


class GoldAnswersMissing(JudgeUnavailable):
    """A gold-check run answers questions that have no gold answer: nothing to compare
    with, so no judge call is made; permanent until the campaign file gives them one."""

    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True)


def questions_without_gold(run: Run) -> list[str]:
    """The qIDs the run answers that have no gold answer, where its track checks answers against
    them (empty otherwise): a reload or the admin can leave a campaign so."""
    if run.track.answer_check not in (AnswerCheck.GOLD, AnswerCheck.BOTH):
        return []
    answered = AnswerRecord.objects.filter(run=run).values("qid")
    return list(
        Question.objects.filter(campaign_id=run.track.campaign_id, qid__in=answered,
                                gold_answers__isnull=True)
        .order_by("position", "qid").values_list("qid", flat=True)
    )


SECOND_JUDGE_FAILED = "the second judge ({model}) failed: {error}"


def second_pass(*, run: Run, judge: Judge, claim: Claim, qids: Collection[str] | None = None,
                progress: GradingProgress | None = None) -> None:
    """Have an AC track's second `judge` label `run` (on `qids` only, when given) beside
    the official labels, for agreement only. Its failure names it: it has a server and a
    model of its own."""
    try:
        run_grade(run=run, judge=judge, slot=JudgeSlot.SECOND, qids=qids,
                  progress=progress, claim=claim)
    except JudgeUnavailable as unavailable:
        raise JudgeUnavailable(SECOND_JUDGE_FAILED.format(
            model=judge.identity.model, error=unavailable),
            permanent=unavailable.permanent) from unavailable
