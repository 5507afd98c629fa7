"""Celery task for scoring: thin; load the campaign, call the service."""

from __future__ import annotations

import uuid

from celery import shared_task

from campaign.models import Campaign
from config.queueing import queue_on_commit
from scoring.services import campaign_score

SCORE_AGAIN = "Ask for scoring again once the queue answers."


@shared_task(acks_late=True, reject_on_worker_lost=True)
def score_campaign(campaign_id: int) -> list[int]:
    """Recompute every leaderboard of a campaign; returns the new evaluation ids.

    Scoring is a pure function of the judgments, so running it twice is harmless.
    """
    campaign = Campaign.objects.get(pk=campaign_id)
    return [evaluation.pk for evaluation in campaign_score(campaign=campaign)]


def enqueue_scoring(campaign_id: int) -> str:
    """Queue a scoring of the campaign once the current transaction commits; the task id.

    Raises `QueueUnavailable` (at the commit) if the task queue does not answer."""
    task_id = str(uuid.uuid4())
    queue_on_commit(score_campaign.apply_async, args=(campaign_id,), task_id=task_id,
                    work="the scoring of the campaign", retry=SCORE_AGAIN)
    return task_id
