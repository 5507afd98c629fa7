"""A large AC run graded in chunks of whole questions, by any workers at once
(GRADING_CHUNK_NUGGETS; docs/operations.md, "Large runs in chunks")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from grading.judge import Judge, JudgeUnavailable
from grading.models import ChunkStatus, GradingChunk
from grading.r2c2.pipeline import GradeReport, run_grade, second_pass
from grading.setup import official_judge, second_judge
from grading.work.claims import Claim, claim_heartbeat, claimed_work
from grading.work.dispatch import enqueue_chunk_grading
from grading.work.runs import RunClaim, round_end_scoring, run_grading_finish
from submissions.models import AnswerRecord, NuggetRecord, Run, RunStatus


def _nugget_counts(run: Run) -> dict[str, int]:
    return dict(NuggetRecord.objects.filter(run=run).order_by().values("qid")
                .annotate(n=Count("id")).values_list("qid", "n"))


def chunk_plan(*, run: Run, size: int) -> list[list[str]]:
    """The run's questions in chunks of at most `size` nugget records (a question with
    more is a chunk of its own), in qID order; one chunk if the run fits in one."""
    nuggets = _nugget_counts(run)
    answered = AnswerRecord.objects.filter(run=run).values_list("qid", flat=True)
    plan: list[list[str]] = [[]]
    filled = 0
    for qid in sorted(set(nuggets) | set(answered)):
        count = nuggets.get(qid, 0)
        if plan[-1] and filled + count > size:
            plan.append([])
            filled = 0
        plan[-1].append(qid)
        filled += count
    return plan


def run_grading_split(*, run: Run, token: str, size: int, queue: str | None = None) -> list[str]:
    """Split a run claimed with `token` into chunks of at most `size` nugget records and queue a
    task per chunk (on `queue`); their task ids, or [] if it fits in one. A redelivered task
    keeps the chunks made, earlier rounds' are deleted; `ClaimLost` if the claim is gone."""
    plan = chunk_plan(run=run, size=size)
    counts = _nugget_counts(run)
    if len(plan) == 1:
        return []
    with RunClaim(token=token, run_id=run.pk).hold():
        GradingChunk.objects.filter(run=run).exclude(round=token).delete()
        made = set(GradingChunk.objects.filter(run=run, round=token)
                   .values_list("number", flat=True))
        # A QUEUED chunk's heartbeat is when it was queued (the reaper reads it).
        now = timezone.now()
        GradingChunk.objects.bulk_create([
            GradingChunk(run=run, round=token, number=number, qids=qids, heartbeat=now,
                         nuggets=sum(counts.get(qid, 0) for qid in qids))
            for number, qids in enumerate(plan, start=1) if number not in made
        ])
        waiting = list(GradingChunk.objects.filter(run=run, round=token)
                       .exclude(status=ChunkStatus.GRADED).values_list("pk", flat=True))
        return enqueue_chunk_grading(waiting, queue=queue)


@dataclass(frozen=True)
class ChunkClaim(Claim):
    """A task's claim on one chunk, which holds while the run is still in its round."""

    chunk_id: int = 0
    run_id: int = 0
    round: str = ""

    def touch(self) -> bool:
        now = timezone.now()
        # The run's row first, everywhere (the finish too): one lock order, no deadlock.
        round_on = Run.objects.filter(pk=self.run_id, status=RunStatus.GRADING,
                                      grading_token=self.round).update(grading_heartbeat=now)
        return bool(round_on) and bool(GradingChunk.objects.filter(
            pk=self.chunk_id, status=ChunkStatus.GRADING, token=self.token,
        ).update(heartbeat=now))


def chunk_claim(*, chunk_id: int, token: str) -> GradingChunk | None:
    """Take a chunk for grading, once, as a run is taken: the chunk, or None if another live task
    holds it, it is graded, or its round is over (the run no longer GRADING under its round)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.GRADING_STALE_SECONDS)
    claimable = (Q(status=ChunkStatus.QUEUED) | Q(status=ChunkStatus.GRADING, token=token)
                 | Q(status=ChunkStatus.GRADING, heartbeat__lt=stale))
    taken = GradingChunk.objects.filter(
        claimable, pk=chunk_id, run__status=RunStatus.GRADING,
        run__grading_token=F("round"),
    ).update(status=ChunkStatus.GRADING, token=token, heartbeat=now)
    if not taken:
        return None
    return GradingChunk.objects.select_related("run__track__campaign").get(pk=chunk_id)


@dataclass(frozen=True)
class ChunkOutcome:
    """How grading a claimed chunk ended."""

    chunk: GradingChunk
    report: GradeReport | None = None  # the official judge's pass; None unless graded
    failure: JudgeUnavailable | None = None  # why the judge failed (the run is FAILED)
    retry: bool = False  # a transient failure left for the caller to retry: still claimed
    lost: bool = False  # the claim or the round was taken over: nothing more written
    run_graded: bool = False  # this was the round's last chunk: the run is GRADED
    scoring_task: str | None = None  # ... and the last run of its campaign's round


def chunk_grading(
    *, chunk: GradingChunk, token: str, judge: Judge | None = None, may_retry: bool = False,
    worker: str = "",
) -> ChunkOutcome:
    """Grade a chunk claimed with `token` (`chunk_claim`) as `run_grading` grades a run, and
    record how it ended; the round's last chunk marks the run GRADED (docs/operations.md)."""
    run = chunk.run
    claim = ChunkClaim(token=token, chunk_id=chunk.pk, run_id=run.pk, round=chunk.round)

    def work() -> tuple[GradeReport, bool]:
        with claim_heartbeat(claim, name=f"heartbeat-chunk-{chunk.pk}"):
            report = run_grade(run=run, judge=judge or official_judge(run.track.campaign),
                               qids=chunk.qids, claim=claim)
            second = second_judge(run.track)
            if second is not None:
                second_pass(run=run, judge=second, claim=claim, qids=chunk.qids)
        return report, _chunk_finish(chunk=chunk, claim=claim, report=report, worker=worker)

    ended = claimed_work(work, fail=lambda reason: _chunk_fail(claim=claim, run=run,
                                                                reason=reason),
                         may_retry=may_retry)
    if ended.report is None:
        return ChunkOutcome(chunk=chunk, failure=ended.failure, retry=ended.retry,
                            lost=ended.lost)
    report, run_graded = ended.report
    scoring_task = round_end_scoring(run=run) if run_graded else None
    return ChunkOutcome(chunk=chunk, report=report, run_graded=run_graded,
                        scoring_task=scoring_task)


def _chunk_finish(*, chunk: GradingChunk, claim: ChunkClaim, report: GradeReport,
                  worker: str) -> bool:
    """Mark the chunk GRADED; if none of its round is left, the run too. Whether it was."""
    with claim.hold():  # the run's row is locked: chunks ending together take turns
        GradingChunk.objects.filter(pk=chunk.pk).update(
            status=ChunkStatus.GRADED, graded_by=worker[:200],
            entailment_calls=report.entailment_calls, answer_calls=report.answer_calls,
            needs_review=report.needs_review)
        left = (GradingChunk.objects.filter(run_id=chunk.run_id, round=chunk.round)
                .exclude(status=ChunkStatus.GRADED).exists())
        if not left:
            run_grading_finish(run=chunk.run, token=chunk.round)
        return not left


def _chunk_fail(*, claim: ChunkClaim, run: Run, reason: str) -> None:
    """The run FAILED with `reason` and the chunk with it, if the round is still on."""
    with transaction.atomic():
        run_grading_finish(run=run, token=claim.round, failure=reason)
        GradingChunk.objects.filter(pk=claim.chunk_id, token=claim.token).update(
            status=ChunkStatus.FAILED)
