"""Writes for grading: the R2C2 judge pipeline over one AC run, and post-edits.

`run_grading` is the one path that grades a claimed run of any graded kind (AC runs
here, ranking and response runs by grading.rubric_services); the Celery task and the
`grade` command both call it. `judgment_edit` is the one path that post-edits a
judgment and queues its runs for re-grading (the API and the organiser pages both call
it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from campaign.models import Campaign, Question
from campaign.vocabulary import AnswerCheck
from grading.claims import Claim, claim_heartbeat, claimed_work
from grading.dispatch import enqueue_scoring, send_runs_grading
from grading.judge import AnswerInput, EntailmentInput, Judge, JudgeInput, JudgeUnavailable
from grading.judgment_cache import (
    QUERY_CHUNK,
    GradingProgress,
    Unwatched,
    chunks,
    ensure_judgments,
)
from grading.llm.schemas import RUBRIC_GRADES
from grading.models import (
    AnswerEvaluation,
    JudgeSlot,
    Judgment,
    JudgmentEdit,
    JudgmentKind,
    JudgmentStatus,
    NuggetEntailment,
)
from grading.rubric_services import RubricGradeReport, rubric_run_grade
from grading.selectors import GRADED_TRACK_KINDS, runs_using
from grading.setup import official_judge, second_judge
from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run, RunStatus


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


#: What one judge's pass over a run did: an AC run's, or a ranking or response run's.
RunGradeReport = GradeReport | RubricGradeReport


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
    """Point each record (nugget or answer) at its judgment in `slot`: create or update.

    One upsert on the link's unique fields (record, slot), so two graders linking the
    same records at once (a takeover under way) both succeed, the later link standing,
    where a plain insert would fail on the unique constraint.
    """
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
    """Grade an AC run with `judge` (docs/judging.md) and link every record to its judgment.

    1. Entailment of every nugget record against the passage its PassageKey names.
    2. Answer evaluation per question with only the entailed nuggets; a question
       with a nugget whose entailment needs review waits until an organiser decides.
    Inputs judged before (by this judge and prompt version) are not sent again.
    Safe to run again, and after post-edits: only new inputs cost judge calls.
    `qids`: only these questions (a chunk of the run, grading.chunks). `claim`: the
    task's claim, re-asserted before each batch and by every link write, which it
    makes in one transaction with the claim's row locked; `ClaimLost` once it is lost.
    """
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


# --- post-editing -----------------------------------------------------------------
NOTE_REQUIRED = "a note saying why the label changes is required"
WRONG_FIELDS = "this {kind} judgment takes {expected}; found {found}"
BAD_RELEVANT = "relevant must list NuggetNums shown to the judge ({shown}); found {found}"
RELEVANT_WITHOUT_CORRECT = "relevant nuggets are only possible when the answer is correct"


class EditRefused(ValueError):
    """A post-edit that does not fit the judgment; `field` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


BAD_GRADE = "grade must be an integer from 0 to 5; found {found!r}"
BAD_ANSWER = "answer must be a string; found {found!r}"


def _checked_grade(judgment: Judgment, changes: dict[str, Any]) -> dict[str, Any]:
    """A rubric edit: `grade` (0..5), and optionally the `answer` (else the one given).

    `key_match`, where the judgment has one, stays the judge's: it checked the answer,
    not the grade (a confirmation, which sends the whole label, may repeat it).
    """
    current = judgment.label or {}
    repeated = "key_match" in changes and changes["key_match"] == current.get("key_match")
    if repeated:
        changes = {k: v for k, v in changes.items() if k != "key_match"}
    if "grade" not in changes or not set(changes) <= {"grade", "answer"}:
        raise EditRefused("grade", WRONG_FIELDS.format(
            kind="rubric", expected='{"grade": 0..5, "answer": "..." (optional)}',
            found=changes))
    grade = changes["grade"]
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in RUBRIC_GRADES:
        raise EditRefused("grade", BAD_GRADE.format(found=grade))
    answer = changes.get("answer", current.get("answer", ""))
    if not isinstance(answer, str):
        raise EditRefused("answer", BAD_ANSWER.format(found=answer))
    label = {"grade": grade, "answer": answer}
    if "key_match" in current:
        label["key_match"] = current["key_match"]
    return label


def _checked_label(judgment: Judgment, changes: dict[str, Any]) -> dict[str, Any]:
    if judgment.kind == JudgmentKind.RUBRIC:
        return _checked_grade(judgment, changes)
    if judgment.kind == JudgmentKind.ENTAILMENT:
        if set(changes) != {"entailed"} or not isinstance(changes["entailed"], bool):
            raise EditRefused("entailed", WRONG_FIELDS.format(
                kind="entailment", expected='{"entailed": true|false}', found=changes))
        return {"entailed": changes["entailed"]}
    if "correct" not in changes or not isinstance(changes["correct"], bool) \
            or not set(changes) <= {"correct", "relevant"}:
        raise EditRefused("correct", WRONG_FIELDS.format(
            kind="answer", expected='{"correct": true|false, "relevant": [NuggetNum, ...]}',
            found=changes))
    relevant = changes.get("relevant", [])
    shown = sorted(n["num"] for n in judgment.input.get("nuggets", []))
    if not isinstance(relevant, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n in shown for n in relevant
    ):
        raise EditRefused("relevant", BAD_RELEVANT.format(shown=shown, found=relevant))
    if relevant and not changes["correct"]:
        raise EditRefused("relevant", RELEVANT_WITHOUT_CORRECT)
    return {"correct": changes["correct"], "relevant": sorted(set(relevant))}


@transaction.atomic
def judgment_edit(
    *, judgment: Judgment, user: AbstractBaseUser | None, changes: dict[str, Any],
    reason: str, note: str, second_judge: bool = False,
) -> Judgment:
    """Post-edit a judgment's label, with its audit trail: it wins wherever this input
    occurs, and the runs it affects are graded and scored again.
    `second_judge`: the second judge decided it under the agreement guarantee, no person."""
    if not note.strip():
        raise EditRefused("note", NOTE_REQUIRED)
    label = _checked_label(judgment, changes)
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    author = None if user is None else user.pk
    JudgmentEdit.objects.create(
        judgment=judgment, edited_by_id=author, note=note, previous_label=judgment.label,
        previous_reason=judgment.reason, new_label=label, new_reason=reason,
    )
    judgment.edited_label = label
    judgment.edited_reason = reason
    judgment.edited_by_id = author
    judgment.edited_at = timezone.now()
    judgment.status = JudgmentStatus.REVIEWED
    judgment.decided_by_second_judge = second_judge
    judgment.full_clean()
    judgment.save()
    _after_edit(judgment)
    return judgment


@transaction.atomic
def judgment_edit_withdraw(*, judgment: Judgment, note: str) -> Judgment:
    """Take back the second judge's decision of a judgment: the official judge's label
    counts again and the judgment needs a person, with the audit trail saying why."""
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    if not judgment.decided_by_second_judge:
        return judgment
    JudgmentEdit.objects.create(
        judgment=judgment, edited_by=None, note=note, previous_label=judgment.label,
        previous_reason=judgment.reason, new_label=judgment.llm_label or {},
        new_reason=judgment.llm_reason)
    judgment.edited_label = None
    judgment.edited_reason = ""
    judgment.edited_by = None
    judgment.edited_at = None
    judgment.decided_by_second_judge = False
    judgment.status = (JudgmentStatus.DONE if judgment.llm_label is not None
                       else JudgmentStatus.NEEDS_REVIEW)
    judgment.save()
    _after_edit(judgment)
    return judgment


def _after_edit(judgment: Judgment) -> None:
    if judgment.kind == JudgmentKind.RUBRIC:
        # A rubric grade is read where it is stored (no run holds a copy to re-grade):
        # scoring again is all an edit needs.
        enqueue_scoring(judgment.campaign_id)
    else:
        enqueue_grading([run.pk for run in runs_using(judgment=judgment)])


def enqueue_grading(run_ids: list[int]) -> list[str]:
    """Mark the runs QUEUED now and send a grading task per run on commit; the task ids.
    A task lost on the way leaves its run QUEUED, where the next "grade pending runs"
    finds it; a queue that does not answer raises `QueueUnavailable` at the commit."""
    runs_mark_queued(run_ids=run_ids)
    return send_runs_grading(run_ids)


CONFIRM_NOTE = "Confirmed by an organiser: the judge's label stands."
NOTHING_TO_CONFIRM = ("this judgment has no label to confirm (the judge's reply never "
                      "parsed); edit it to give one")


@transaction.atomic
def judgment_confirm(*, judgment: Judgment, user: AbstractBaseUser) -> Judgment:
    """One click for "reviewed, the judge was right": an edit to the label it already has.

    It is an edit like any other (a JudgmentEdit with CONFIRM_NOTE, the reason kept), so
    agreement figures count it as the organisers agreeing, and whatever asks whether a
    doubtful judgment was reviewed sees it edited (status `reviewed`). Its runs are
    graded and scored again, as after any edit, so no leaderboard is older than it.
    """
    # The label confirmed is the one stored now, not the one the caller last saw.
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    label = judgment.label
    if label is None:
        raise EditRefused("label", NOTHING_TO_CONFIRM)
    return judgment_edit(judgment=judgment, user=user, changes=dict(label),
                         reason=judgment.reason, note=CONFIRM_NOTE)


# --- run status around grading ------------------------------------------------------
def runs_mark_queued(*, run_ids: Sequence[int]) -> int:
    """Mark the current accepted runs among `run_ids` that grading takes (AC, ranking,
    response; PR runs are never graded) QUEUED; how many were marked.

    Called where grading is asked for, in the same transaction that sends the tasks on
    commit, so the statuses show the queue: a round of grading ends when no run of the
    campaign is QUEUED or GRADING (`run_grading`). A run being graded is marked too: the
    grader's finish then records nothing (its claim is no longer GRADING) and the new
    task grades it again, seeing whatever was asked for meanwhile (a judgment edit).

    A person asking starts the reaper's count again (`grading_requeues`), and the
    heartbeat of a QUEUED run says when it was queued: the reaper sends a run's task
    again only once it has waited GRADING_STALE_SECONDS with idle workers (grading.reaper).
    """
    return (Run.objects.filter(pk__in=run_ids, track__kind__in=GRADED_TRACK_KINDS).current()
            .accepted().update(status=RunStatus.QUEUED, grading_requeues=0,
                               grading_heartbeat=timezone.now()))


def run_claim_for_grading(*, run_id: int, token: str) -> bool:
    """Take a run for grading, once: False if another live task holds it or it is not gradable.

    Gradable: a current AC, ranking or response run that is QUEUED, never graded,
    FAILED, or graded before (grading again only costs judge calls for inputs that
    changed). A task redelivered after its worker died carries
    the same token and may take its run again; so may any task once the holder's
    heartbeat is older than GRADING_STALE_SECONDS (its worker was killed and nothing
    redelivered the task). The work is idempotent (judgments are cached, links
    upserted), so taking over loses and duplicates nothing.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    claimable = (
        Q(status__in=RunStatus.AWAITING_GRADING | RunStatus.JUDGED)
        | Q(status=RunStatus.GRADING, grading_token=token)
        | Q(status=RunStatus.GRADING, grading_heartbeat__lt=stale)
    )
    return bool(
        Run.objects.filter(claimable, pk=run_id, track__kind__in=GRADED_TRACK_KINDS).current()
        .update(status=RunStatus.GRADING, grading_token=token, grading_heartbeat=now,
                failure_reason="")
    )


@dataclass(frozen=True)
class RunClaim(Claim):
    """A task's claim on a whole run (`run_claim_for_grading`)."""

    run_id: int = 0

    def touch(self) -> bool:
        # QUEUED too: a run queued again while graded stays its grader's until another
        # task claims it (`runs_mark_queued`); only the finish needs it GRADING.
        return bool(Run.objects.filter(
            pk=self.run_id, grading_token=self.token, status__in=RunStatus.IN_GRADING,
        ).update(grading_heartbeat=timezone.now()))


@contextlib.contextmanager
def run_grading_heartbeat(*, run: Run, token: str) -> Iterator[RunClaim]:
    """While the block runs, tell other workers every 30 s that `token` still grades
    `run`; the claim it yields says when that stopped being true."""
    claim = RunClaim(token=token, run_id=run.pk)
    with claim_heartbeat(claim, name=f"heartbeat-run-{run.pk}"):
        yield claim


FAILED_WITHOUT_MESSAGE = ("grading failed on an error that gave no message; the "
                          "organisers find the details in the grading log")


def run_grading_finish(
    *, run: Run, token: str | None = None, failure: str | None = None
) -> None:
    """Record how grading a run ended: GRADED, or FAILED with `failure` as its reason.

    Only the claim `token` holds is ended: a grader whose run was taken over, or queued
    again meanwhile (`runs_mark_queued`), records nothing and the outcome stays with the
    new task. Without a token, whichever claim holds the run is ended (tests that set a
    run GRADING by hand).
    """
    if failure is not None and not failure.strip():
        failure = FAILED_WITHOUT_MESSAGE  # a FAILED run always says why
    held = Run.objects.filter(pk=run.pk, status=RunStatus.GRADING)
    if token is not None:
        held = held.filter(grading_token=token)
    held.update(
        status=RunStatus.GRADED if failure is None else RunStatus.FAILED, grading_token="",
        graded_at=timezone.now(), failure_reason=failure or "",
    )


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


def _questions_without_gold(run: Run) -> list[str]:
    """The qIDs the run answers that have no gold answer, where its track checks answers
    against them (empty otherwise). Loading refuses such a campaign file, but a reload
    keeps questions the file dropped (without their gold answers), and the admin edits
    tracks and gold answers."""
    if run.track.answer_check not in (AnswerCheck.GOLD, AnswerCheck.BOTH):
        return []
    answered = AnswerRecord.objects.filter(run=run).values("qid")
    return list(
        Question.objects.filter(campaign_id=run.track.campaign_id, qid__in=answered,
                                gold_answers__isnull=True)
        .order_by("position", "qid").values_list("qid", flat=True)
    )


SECOND_JUDGE_FAILED = "the second judge ({model}) failed: {error}"

#: Makes the progress watcher of one judge's pass over a run, given its description.
GradingWatch = Callable[[str], AbstractContextManager[GradingProgress]]


def _unwatched(desc: str) -> AbstractContextManager[GradingProgress]:
    return contextlib.nullcontext(Unwatched())


@dataclass(frozen=True)
class GradingOutcome:
    """How grading a claimed run ended (what `run_grading` recorded on it)."""

    run: Run
    report: RunGradeReport | None = None  # the official judge's pass; None unless graded
    failure: JudgeUnavailable | None = None  # why the judge failed; its text is on the run
    retry: bool = False  # a transient failure left for the caller to retry: still claimed
    scoring_task: str | None = None  # the last run of a round was graded: scoring queued
    lost: bool = False  # the claim was taken over: nothing more was written, nor recorded
    chunk_tasks: tuple[str, ...] = ()  # split into chunks (grading.chunks): their tasks


def run_grading(
    *, run: Run, token: str, judge: Judge | None = None, may_retry: bool = False,
    queue_scoring: bool = True, watch: GradingWatch = _unwatched,
    split_above: int | None = None, chunk_queue: str | None = None,
) -> GradingOutcome:
    """Grade a run claimed with `token` (`run_claim_for_grading`) and record how it ended.

    The official judge (`judge`, else the settings' one) grades the run: an AC run with
    the R2C2 pipeline (`run_grade`), a ranking or response run by self-rating what it
    retrieved on the test bank (`rubric_run_grade`). An AC track's second judge, if it
    has one, then labels the run again beside the official labels, for agreement only.
    A heartbeat keeps the claim alive meanwhile. Then:
    - graded: the run is GRADED (any earlier failure reason cleared); if no current run
      of the campaign is QUEUED or GRADING anymore, this was the last of a round and
      scoring is queued, for fresh leaderboards (unless not `queue_scoring`: the caller
      scores). A run queued again while it was graded stays QUEUED (`runs_mark_queued`);
    - the judge failed (`JudgeUnavailable`): the run is FAILED with the judge's first
      error as its reason, at once when the server refused (a permanent 4xx: a bad API
      key, an unknown model); a transient failure with `may_retry` leaves the run claimed
      and the outcome says `retry` (the caller tries again later with the same token);
    - a gold-check run answers a question without a gold answer (`GoldAnswersMissing`):
      FAILED at once, naming the questions, before any judge call;
    - the claim was lost (taken over, or the run queued again and claimed by another
      task): nothing more is written or recorded, and the outcome says `lost`;
    - anything else: the run is FAILED, its reason naming the error, and it is raised.
    `watch(desc)` gives the progress watcher of each judge's pass (the command's bars).
    An AC run with more nugget records than `split_above` is not graded here: it is
    split into chunks of whole questions, a task each (on `chunk_queue`), which any
    workers grade (grading.chunks); the outcome lists their tasks.
    """
    def fail(reason: str) -> None:
        run_grading_finish(run=run, token=token, failure=reason)

    def work() -> RunGradeReport | tuple[str, ...]:
        without_gold = [] if run.track.is_rubric else _questions_without_gold(run)
        if without_gold:
            raise GoldAnswersMissing(GOLD_ANSWERS_MISSING.format(
                track=run.track.slug, check=run.track.answer_check,
                qids=", ".join(without_gold)))
        if split_above is not None and not run.track.is_rubric:
            tasks = _split_if_large(run=run, token=token, size=split_above, queue=chunk_queue)
            if tasks:
                return tuple(tasks)
        with run_grading_heartbeat(run=run, token=token) as claim:
            with watch(run.name) as progress:
                report = _grade_pass(run=run, judge=judge or official_judge(run.track.campaign),
                                     progress=progress, claim=claim)
            # Rubric grades have no second slot, and need none: a grade belongs to a
            # passage and an item (PassageItemGrade, one per pair), shared by every run
            # and track, and no judge agreement is defined for them
            # (judge_agreement and the disagreement filter are R2C2's). A second judge's
            # rubric pass would cost judge calls whose labels nothing reads.
            second = None if run.track.is_rubric else second_judge(run.track)
            if second is not None:
                with watch(f"{run.name} (second judge)") as progress:
                    second_pass(run=run, judge=second, claim=claim, progress=progress)
        return report

    ended = claimed_work(work, fail=fail, may_retry=may_retry)
    if isinstance(ended.report, tuple):
        return GradingOutcome(run=run, chunk_tasks=ended.report)
    if ended.report is None:
        return GradingOutcome(run=run, failure=ended.failure, retry=ended.retry,
                              lost=ended.lost)
    report = ended.report
    run_grading_finish(run=run, token=token)
    scoring_task = round_end_scoring(run=run) if queue_scoring else None
    return GradingOutcome(run=run, report=report, scoring_task=scoring_task)


def round_end_scoring(*, run: Run) -> str | None:
    """Queue scoring if no current run of `run`'s campaign is QUEUED or GRADING anymore
    (`run` was the last of a round of grading); the scoring task's id, or None."""
    campaign_id = run.track.campaign_id
    if Run.objects.filter(track__campaign_id=campaign_id).current().in_grading().exists():
        return None
    return enqueue_scoring(campaign_id)


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


def _grade_pass(*, run: Run, judge: Judge, progress: GradingProgress,
                claim: RunClaim) -> RunGradeReport:
    """One official pass over `run`, by its track's kind."""
    if run.track.is_rubric:
        return rubric_run_grade(run=run, judge=judge, progress=progress, claim=claim)
    return run_grade(run=run, judge=judge, progress=progress, claim=claim)


def _split_if_large(*, run: Run, token: str, size: int, queue: str | None) -> list[str]:
    # The chunks module grades with this one's services; it is imported when needed.
    from grading import chunks

    return chunks.run_grading_split(run=run, token=token, size=size, queue=queue)


def campaign_grading_queue(*, campaign: Campaign, include_graded: bool = False) -> list[int]:
    """The runs to grade (AC, ranking and response; PR runs are never graded): new,
    queued and failed ones (a queued run whose task was lost included), those whose
    grader died (no heartbeat for GRADING_STALE_SECONDS), and graded ones when asked.
    Withdrawn runs are left out: no leaderboard reads their grades (an organiser's
    re-run of one grades it all the same)."""
    statuses = RunStatus.AWAITING_GRADING | (RunStatus.JUDGED if include_graded else frozenset())
    stale = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    return list(
        Run.objects.filter(track__campaign=campaign, track__kind__in=GRADED_TRACK_KINDS)
        .current().not_withdrawn()
        .filter(Q(status__in=statuses) | Q(status=RunStatus.GRADING, grading_heartbeat__lt=stale))
        .order_by("pk").values_list("pk", flat=True)
    )
