"""Celery tasks for grading: thin; claim the run, call the service, record the outcome."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from celery import shared_task
from django.conf import settings
from django.contrib.auth.models import User

from campaign.models import Campaign
from grading.judge import JudgeUnavailable
from grading.rubric.bank_changes import testbank_items_regrade
from grading.rubric.drafting import testbank_generate
from grading.rubric.grades import RubricGradeReport
from grading.setup import judge_named, official_judge, official_model_name
from grading.validation.labelled import DEV_SET, read_labelled_set
from grading.validation.services import grading_refusal, judge_validation_run
from grading.work.chunks import chunk_claim, chunk_grading
from grading.work.dispatch import GENERATE_TESTBANK, GRADE_CHUNK, GRADE_RUN, GRADE_TESTBANK_ITEMS
from grading.work.reaper import grading_reap
from grading.work.run_grading import run_grading
from grading.work.runs import run_claim_for_grading
from submissions.models import Run, RunStatus

logger = logging.getLogger(__name__)

#: A grading task is acknowledged once done (redelivered if its worker dies) and tried
#: again on a judge that does not answer.
_REDELIVERED_AND_RETRIED: dict[str, Any] = {
    "bind": True, "max_retries": 5, "acks_late": True, "reject_on_worker_lost": True}


@shared_task(name=GRADE_RUN, **_REDELIVERED_AND_RETRIED)
def grade_run(self: Any, run_id: int) -> dict[str, Any] | None:
    """Grade one AC, ranking or response run; an AC run of more than GRADING_CHUNK_NUGGETS
    nugget records is split into chunks, a `grade_chunk` task each, which any workers
    take (grading.work.chunks). Redelivered or repeated, it does no work twice."""
    token = str(self.request.id)
    campaign = Campaign.objects.filter(tracks__runs__pk=run_id).first()
    refusal = campaign and grading_refusal(campaign=campaign,
                                           judge_model=official_model_name())
    if refusal:
        # The run stays QUEUED; grading it again after a passing validation takes it.
        logger.warning("run %s not graded: %s", run_id, refusal)
        return None
    if Run.objects.filter(pk=run_id, status__in=RunStatus.JUDGED).exists():
        # Sending this task marked the run QUEUED: another grading has done its work
        # since (after a batch of edits, say, one task per edit finds this).
        logger.info("run %s was graded since this task was sent: nothing to do", run_id)
        return None
    if not run_claim_for_grading(run_id=run_id, token=token):
        logger.info("run %s is not waiting for grading (or another task has it)", run_id)
        return None
    run = Run.objects.select_related("track__campaign").get(pk=run_id)
    # A large run's chunks go to the queue this task came from, to any of its workers.
    queue = (self.request.delivery_info or {}).get("routing_key")
    outcome = run_grading(run=run, token=token,
                          may_retry=self.request.retries < self.max_retries,
                          split_above=settings.GRADING_CHUNK_NUGGETS, chunk_queue=queue)
    if outcome.lost:
        logger.info("run %s was taken over by another task; this one stopped", run_id)
        return None
    if outcome.chunk_tasks:
        return {"chunk_tasks": list(outcome.chunk_tasks)}
    if outcome.retry:
        # The run stays claimed by this task id: the retry takes it again.
        raise self.retry(exc=outcome.failure,
                         countdown=min(600, 30 * 2 ** self.request.retries))
    if outcome.failure is not None:
        # Recorded on the run; a refusal (permanent) is not retried, it fails at once.
        logger.error("run %s failed: %s", run_id, outcome.failure)
        raise outcome.failure
    report = outcome.report
    assert report is not None  # graded
    if isinstance(report, RubricGradeReport):
        return {"passages": report.passages, "pairs": report.pairs,
                "judge_calls": report.judge_calls, "needs_review": report.needs_review,
                "without_items": report.without_items, "scoring_task": outcome.scoring_task}
    return {"entailment_calls": report.entailment_calls, "answer_calls": report.answer_calls,
            "needs_review": report.needs_review, "scoring_task": outcome.scoring_task}


@shared_task(name=GRADE_CHUNK, **_REDELIVERED_AND_RETRIED)
def grade_chunk(self: Any, chunk_id: int) -> dict[str, Any] | None:
    """Grade one chunk of a large AC run (grading.work.chunks). Redelivered or repeated, it
    does no work twice; a chunk whose round is over is left alone."""
    token = str(self.request.id)
    chunk = chunk_claim(chunk_id=chunk_id, token=token)
    if chunk is None:
        logger.info("chunk %s is not waiting for grading (or another task has it)", chunk_id)
        return None
    outcome = chunk_grading(chunk=chunk, token=token, worker=str(self.request.hostname or ""),
                            may_retry=self.request.retries < self.max_retries)
    if outcome.lost:
        logger.info("chunk %s: its run was taken over; this task stopped", chunk_id)
        return None
    if outcome.retry:
        raise self.retry(exc=outcome.failure,
                         countdown=min(600, 30 * 2 ** self.request.retries))
    if outcome.failure is not None:
        logger.error("chunk %s of run %s failed: %s", chunk_id, chunk.run_id, outcome.failure)
        raise outcome.failure
    report = outcome.report
    assert report is not None  # graded
    return {"entailment_calls": report.entailment_calls, "answer_calls": report.answer_calls,
            "needs_review": report.needs_review, "run_graded": outcome.run_graded,
            "scoring_task": outcome.scoring_task}


@shared_task(name=GRADE_TESTBANK_ITEMS, **_REDELIVERED_AND_RETRIED)
def grade_testbank_items(self: Any, campaign_id: int,
                         item_ids: list[int]) -> dict[str, Any] | None:
    """Grade test-bank items just added or edited (grading.rubric.bank_changes). Repeated,
    it finds its judgments cached and makes no judge call."""
    campaign = Campaign.objects.get(pk=campaign_id)
    refusal = grading_refusal(campaign=campaign, judge_model=official_model_name())
    if refusal:
        # As for a run: nothing is graded with a judge the campaign has not accepted;
        # grading the runs again after a passing validation grades these items too.
        logger.warning("test-bank items %s of %s not graded: %s", item_ids, campaign.slug,
                       refusal)
        return None
    try:
        done = testbank_items_regrade(campaign=campaign, items=item_ids,
                                      judge=official_judge(campaign))
    except JudgeUnavailable as unavailable:
        if unavailable.permanent or self.request.retries >= self.max_retries:
            logger.error("test-bank items %s of %s not graded: %s", item_ids,
                         campaign.slug, unavailable)
            raise
        raise self.retry(exc=unavailable, countdown=min(
            600, 30 * 2 ** self.request.retries)) from unavailable
    report = done.report
    return {"passages": report.passages, "pairs": report.pairs,
            "judge_calls": report.judge_calls, "needs_review": report.needs_review,
            "scoring_task": done.scoring_task}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def reap_stalled_grading() -> dict[str, list[Any]]:
    """Re-queue or fail grading that went silent (grading.work.reaper); sent by `celery beat`
    every GRADING_REAP_EVERY seconds, on the default queue (never behind grading)."""
    report = grading_reap()
    for problem in report.not_sent:
        logger.error("reaper: not sent: %s", problem)
    return dataclasses.asdict(report)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def validate_judge(campaign_id: int, judge_name: str, user_id: int | None = None) -> int:
    """Measure a judge on the project's dev set for a campaign (the dashboard's button)."""
    campaign = Campaign.objects.get(pk=campaign_id)
    user = User.objects.filter(pk=user_id).first() if user_id else None
    validation = judge_validation_run(
        campaign=campaign, judge=judge_named(campaign, judge_name), judge_name=judge_name,
        labelled=read_labelled_set(DEV_SET), user=user)
    logger.info("judge validation %s of %s: %s", validation.pk, campaign.slug,
                "passed" if validation.passed else "failed")
    return validation.pk


@shared_task(name=GENERATE_TESTBANK, acks_late=True, reject_on_worker_lost=True)
def generate_testbank(campaign_id: int, target: str, n: int,
                      user_id: int | None = None) -> dict[str, Any]:
    """Draft test-bank items for a campaign's queries without items (the API, the
    dashboard's button). Run again, it finds those queries drafted and skips them."""
    campaign = Campaign.objects.get(pk=campaign_id)
    user = User.objects.filter(pk=user_id).first() if user_id else None
    report = testbank_generate(campaign=campaign, judge=official_judge(), target=target,
                               n=n, user=user)
    for qid, reason in report.failed.items():
        logger.warning("test bank of %s, query %s: nothing drafted: %s", campaign.slug, qid,
                       reason)
    return {"drafted": report.drafted, "failed": report.failed, "skipped": report.skipped}
