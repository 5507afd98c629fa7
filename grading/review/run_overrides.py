"""Organisers' overrides of a run, with what follows from each.

The run's new state and its audit line are submissions.overrides' (which knows neither
grading nor scoring); this module queues what follows, in the same transaction, so an
action is never recorded without its consequence queued, nor queued without its record:
- re-run: the run is graded again, by the path the dashboard's "grade" takes
  (`enqueue_grading`: QUEUED now, a task on commit);
- withdraw and restore: the leaderboards are recomputed without / with the run;
- charge and refund a failure: nothing to queue (the quota reads the run as it is).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from grading.setup import official_model_name
from grading.validation.services import grading_refusal
from grading.work.dispatch import enqueue_scoring
from grading.work.runs import enqueue_grading
from submissions.models import Run, RunAction, RunActionKind
from submissions.overrides import OverrideRefused, run_action_record


@dataclass(frozen=True)
class RunOverride:
    """An override done: its audit line and the tasks queued after it."""

    action: RunAction
    tasks: tuple[str, ...] = ()


def run_override(
    *, run: Run, action: RunActionKind, user: AbstractBaseUser, reason: str
) -> RunOverride:
    """Do `action` to `run` for an organiser, audited with `reason`, and queue what follows.

    OverrideRefused for a missing or bad reason, a run whose state does not allow the
    action, or (re-run) a campaign whose judge may not grade yet (the words the
    dashboard gives). `QueueUnavailable` at the commit if the queue does not answer:
    the action stands, its work is what to ask for again.
    """
    if action == RunActionKind.RERUN:
        refusal = grading_refusal(campaign=run.track.campaign,
                                  judge_model=official_model_name())
        if refusal:
            raise OverrideRefused(409, refusal)
    with transaction.atomic():
        record = run_action_record(run=run, action=action, user=user, reason=reason)
        tasks: list[str] = []
        if action == RunActionKind.RERUN:
            tasks = enqueue_grading([run.pk])
        elif action in (RunActionKind.WITHDRAW, RunActionKind.RESTORE):
            tasks = [enqueue_scoring(run.track.campaign_id)]
    return RunOverride(action=record, tasks=tuple(tasks))
