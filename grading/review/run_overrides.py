"""Organisers' overrides of a run, with what follows from each queued in the same transaction
as its record (docs/review.md, "Run overrides")."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from grading.setup import official_model_name
from grading.validation.services import grading_refusal
from grading.work.dispatch import enqueue_scoring
from grading.work.rounds import enqueue_grading
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
    """Do `action` to `run` for an organiser, audited with `reason`, and queue what follows;
    OverrideRefused when refused, `QueueUnavailable` at the commit if the queue does not answer."""
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
