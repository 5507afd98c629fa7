"""Rounds of grading in tests, through the service's own functions: a run's round started and its
part claimed, then ended graded or failed."""

from __future__ import annotations

from grading.models import GradingPart
from grading.work.claims import claim_of, part_claim
from grading.work.rounds import part_fail, part_graded, rounds_start
from submissions.models import Run


def queued_part(run: Run) -> int:
    """A new round for `run` (QUEUED), as asking for grading makes it; its first part's id."""
    parts = rounds_start(run_ids=[run.pk])
    assert parts, f"{run.name} is not gradable"
    return parts[0]


def claimed_part(run: Run, token: str = "task-1") -> GradingPart:
    """A new round for `run` (QUEUED), its first part then claimed by `token` (GRADING)."""
    part = part_claim(part_id=queued_part(run), token=token)
    assert part is not None, f"part 1 of {run.name} could not be claimed"
    return part


def part_of(run: Run, number: int = 1) -> GradingPart:
    """Part `number` of the run's current round, as stored now."""
    return GradingPart.objects.select_related("job__run__track__campaign").get(
        job__run=run, number=number)


def round_graded(run: Run, token: str = "task-1") -> None:
    """A round of one part for `run`, ended GRADED as a grader's finish ends it."""
    part = claimed_part(run, token)
    with claim_of(part, token=token).hold():
        assert part_graded(part=part, calls=0, needs_review=0)
    run.refresh_from_db()


def round_failed(run: Run, reason: str, token: str = "task-1") -> None:
    """A round of one part for `run`, ended FAILED with `reason`."""
    assert part_fail(part=claimed_part(run, token), token=token, reason=reason)
    run.refresh_from_db()
