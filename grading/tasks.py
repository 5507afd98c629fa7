"""Celery tasks for grading: thin; claim the work, call the service, record the outcome."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from celery import shared_task
from django.contrib.auth.models import User

from campaign.models import Campaign
from grading.judge import JudgeUnavailable
from grading.rubric.bank_changes import testbank_items_regrade
from grading.rubric.drafting import testbank_generate
from grading.rubric.grades import RubricGradeReport
from grading.setup import judge_named, official_judge, official_model_name
from grading.validation.labelled import DEV_SET, read_labelled_set
from grading.validation.services import grading_refusal, judge_validation_run
from grading.work.claims import part_claim
from grading.work.dispatch import GENERATE_TESTBANK, GRADE_PART, GRADE_TESTBANK_ITEMS
from grading.work.part_grading import part_grading
from grading.work.reaper import grading_reap

logger = logging.getLogger(__name__)

#: A grading task is acknowledged once done (redelivered if its worker dies) and tried
#: again on a judge that does not answer.
_REDELIVERED_AND_RETRIED: dict[str, Any] = {
    "bind": True, "max_retries": 5, "acks_late": True, "reject_on_worker_lost": True}


@shared_task(name=GRADE_PART, **_REDELIVERED_AND_RETRIED)
def grade_part(self: Any, part_id: int) -> dict[str, Any] | None:
    """Grade one part of a round: a whole AC, ranking or response run, or some questions of a
    large AC run (grading.work.rounds). Redelivered or repeated, it does no work twice."""
    token = str(self.request.id)
    campaign = Campaign.objects.filter(tracks__runs__grading_job__parts__pk=part_id).first()
    refusal = campaign and grading_refusal(campaign=campaign,
                                           judge_model=official_model_name())
    if refusal:
        # The part stays QUEUED; grading again after a passing validation takes it.
        logger.warning("part %s not graded: %s", part_id, refusal)
        return None
    part = part_claim(part_id=part_id, token=token)
    if part is None:
        # Graded, or replaced by a newer round (one task per edit finds this), or taken.
        logger.info("part %s is not waiting for grading (or another task has it)", part_id)
        return None
    outcome = part_grading(part=part, token=token, worker=str(self.request.hostname or ""),
                           may_retry=self.request.retries < self.max_retries)
    if outcome.lost:
        logger.info("part %s of run %s was taken over; this task stopped", part.number,
                    outcome.run.pk)
        return None
    if outcome.retry:
        # The part stays claimed by this task id: the retry takes it again.
        raise self.retry(exc=outcome.failure,
                         countdown=min(600, 30 * 2 ** self.request.retries))
    if outcome.failure is not None:
        # Recorded on the run; a refusal (permanent) is not retried, it fails at once.
        logger.error("part %s of run %s failed: %s", part.number, outcome.run.pk,
                     outcome.failure)
        raise outcome.failure
    report = outcome.report
    assert report is not None  # graded
    summary: dict[str, Any] = {"run": outcome.run.pk, "part": part.number,
                               "judge_calls": report.judge_calls,
                               "needs_review": report.needs_review,
                               "run_graded": outcome.run_graded,
                               "scoring_task": outcome.scoring_task}
    if isinstance(report, RubricGradeReport):
        return {**summary, "passages": report.passages, "pairs": report.pairs,
                "without_items": report.without_items}
    return {**summary, "entailment_calls": report.entailment_calls,
            "answer_calls": report.answer_calls}


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
