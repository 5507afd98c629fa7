"""What grading sends to the workers, by task name: its own tasks (grading.tasks
registers them under these names) and, once a round is graded, scoring's. Nothing here
imports a task, so the services that send work and the tasks that do it form no circle."""

from __future__ import annotations

import uuid
from typing import Any

from celery import current_app

from infrastructure.queueing import queue_on_commit

GRADE_PART = "grading.tasks.grade_part"
GRADE_TESTBANK_ITEMS = "grading.tasks.grade_testbank_items"
GENERATE_TESTBANK = "grading.tasks.generate_testbank"
#: Scoring's task (scoring.tasks registers it): grading imports nothing of scoring.
SCORE_CAMPAIGN = "scoring.tasks.score_campaign"

#: What to do when grading could not be queued: the runs are QUEUED, and stay so.
RUNS_STAY_QUEUED = ("The runs stay queued: ask for grading of the pending runs again once "
                    "the queue answers (or run `manage.py grade`).")
GRADE_ALL_AGAIN = ("Once the queue answers, ask for grading again with the graded runs "
                   "included: that grades every current item.")
SCORE_AGAIN = "Ask for scoring again once the queue answers."


def _send_on_commit(name: str, *, work: str, retry: str, **options: Any) -> str:
    """Send task `name` once the current transaction commits; its task id.

    The registered task sends itself as configured (eagerly where a test asks for it)."""
    task_id = str(uuid.uuid4())
    queue_on_commit(current_app.tasks[name].apply_async, task_id=task_id, work=work,
                    retry=retry, **options)
    return task_id


def send_parts_grading(part_ids: list[int]) -> list[str]:
    """A grading task per part of a round (already QUEUED), sent on commit; the task ids."""
    work = f"the grading of {len(part_ids)} part(s) of runs"
    return [_send_on_commit(GRADE_PART, args=(part_id,), work=work, retry=RUNS_STAY_QUEUED)
            for part_id in part_ids]


def send_part_regrading(part_id: int) -> str:
    """The reaper's new task for a part whose worker went silent or whose task was lost."""
    return _send_on_commit(GRADE_PART, args=(part_id,), retry=RUNS_STAY_QUEUED,
                           work="the grading of a run whose worker went silent")


def enqueue_testbank_items(campaign_id: int, item_ids: list[int]) -> str:
    """The grading of changed test-bank items, sent on commit; its task id."""
    return _send_on_commit(GRADE_TESTBANK_ITEMS, args=(campaign_id, item_ids),
                           work="the grading of the changed test-bank item(s)",
                           retry=GRADE_ALL_AGAIN)


def enqueue_testbank_generation(*, campaign_id: int, target: str, n: int,
                                user_id: int | None) -> str:
    """The drafting of test-bank items, sent on commit; its task id."""
    return _send_on_commit(GENERATE_TESTBANK, args=(campaign_id, target, n, user_id),
                           work="the drafting of test-bank items",
                           retry="Ask for the drafts again once the queue answers.")


def enqueue_scoring(campaign_id: int) -> str:
    """A scoring of the campaign, sent on commit; its task id. `QueueUnavailable` (at the
    commit) if the task queue does not answer."""
    return _send_on_commit(SCORE_CAMPAIGN, args=(campaign_id,),
                           work="the scoring of the campaign", retry=SCORE_AGAIN)
