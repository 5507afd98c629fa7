"""Celery task for scoring: thin; load the campaign, call the service."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from campaign.models import Campaign
from grading.work.dispatch import SCORE_CAMPAIGN
from scoring.services import campaign_score


# A database connection lost mid-scoring (PostgreSQL restarted, a proxy's idle cut, a
# failover) fails the task with OperationalError or InterfaceError; nothing else would
# send it again, and the round's runs would stay GRADED with stale leaderboards. Celery's
# Django fixup closes the broken connection after the task, so the retry opens a new one.
@shared_task(name=SCORE_CAMPAIGN, acks_late=True, reject_on_worker_lost=True,
             autoretry_for=(OperationalError, InterfaceError), retry_backoff=1, max_retries=5)
def score_campaign(campaign_id: int) -> list[int]:
    """Recompute every leaderboard of a campaign; returns the new evaluation ids. Scoring is a
    pure function of the judgments, so running it twice, or a retry, is harmless."""
    campaign = Campaign.objects.get(pk=campaign_id)
    return [evaluation.pk for evaluation in campaign_score(campaign=campaign)]
