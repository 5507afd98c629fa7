"""Celery tasks for grading: thin; claim the run, call the service, record the outcome."""

from __future__ import annotations

import functools
import logging
import uuid
from typing import Any

from celery import shared_task
from django.contrib.auth.models import User
from django.db import transaction

from campaign.models import Campaign
from grading.judge import JudgeUnavailable
from grading.models import JudgeSlot
from grading.services import (
    run_claim_for_grading,
    run_grade,
    run_grading_finish,
    run_grading_heartbeat,
)
from grading.setup import judge_named, official_judge, official_model_name, second_judge
from grading.validation.labelled import DEV_SET, read_labelled_set
from grading.validation.services import grading_refusal, judge_validation_run
from scoring.tasks import enqueue_scoring
from submissions.models import Run, RunStatus

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=5, acks_late=True, reject_on_worker_lost=True)
def grade_run(self: Any, run_id: int) -> dict[str, Any] | None:
    """Grade one AC run. Redelivered or repeated, it does no work twice."""
    token = str(self.request.id)
    campaign = Campaign.objects.filter(tracks__runs__pk=run_id).first()
    refusal = campaign and grading_refusal(campaign=campaign,
                                           judge_model=official_model_name())
    if refusal:
        # The run stays waiting; grading it again after a passing validation takes it.
        logger.warning("run %s not graded: %s", run_id, refusal)
        return None
    if not run_claim_for_grading(run_id=run_id, token=token):
        logger.info("run %s is not waiting for grading (or another task has it)", run_id)
        return None
    run = Run.objects.select_related("track__campaign").get(pk=run_id)
    try:
        with run_grading_heartbeat(run=run, token=token):
            report = run_grade(run=run, judge=official_judge())
            second = second_judge(run.track)
            if second is not None:
                # Stored beside the official labels, for agreement only.
                run_grade(run=run, judge=second, slot=JudgeSlot.SECOND)
    except JudgeUnavailable as exc:
        if self.request.retries < self.max_retries:
            # The run stays claimed by this task id: the retry takes it again.
            raise self.retry(exc=exc, countdown=min(600, 30 * 2 ** self.request.retries)) from exc
        run_grading_finish(run=run, failed=True)
        raise
    except Exception:
        run_grading_finish(run=run, failed=True)
        raise
    run_grading_finish(run=run)
    campaign = run.track.campaign
    scoring = None
    if not Run.objects.filter(track__campaign=campaign, status=RunStatus.GRADING).exists():
        scoring = enqueue_scoring(campaign.pk)  # the last run of a round: fresh leaderboards
    return {"entailment_calls": report.entailment_calls, "answer_calls": report.answer_calls,
            "needs_review": report.needs_review, "scoring_task": scoring}


def enqueue_grading(run_ids: list[int]) -> list[str]:
    """Queue a grading task per run once the transaction commits; returns the task ids."""

    def send(run_id: int, task_id: str) -> None:
        grade_run.apply_async(args=(run_id,), task_id=task_id)

    task_ids = [str(uuid.uuid4()) for _ in run_ids]
    for run_id, task_id in zip(run_ids, task_ids, strict=True):
        transaction.on_commit(functools.partial(send, run_id, task_id))
    return task_ids


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
