"""The run lifecycle asked one way everywhere: the named status sets on RunStatus and
the RunQuerySet that reads them (`Run.objects.current().accepted().of_kinds(...)`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

import pytest
from django.utils import timezone

from campaign.models import Team, Track
from submissions.models import Run, RunStatus
from tests.support import Personas

pytestmark = pytest.mark.django_db

S = RunStatus


def test_the_named_sets_are_not_statuses_themselves() -> None:
    assert [value for value, _ in RunStatus.choices] == [
        "received", "invalid", "valid", "queued", "grading", "graded", "scored", "failed"]
    assert RunStatus.QUEUED.label == "Queued"


def test_accepted_is_every_status_an_upload_reaches_by_passing_validation() -> None:
    assert set(RunStatus) - {S.RECEIVED, S.INVALID} == S.ACCEPTED


def test_a_run_is_either_waiting_for_a_grader_held_by_one_or_judged() -> None:
    # Every accepted status is in exactly one of the three; a claim takes the first and
    # the last (grading again), never one that a live grader holds.
    parts = [S.AWAITING_GRADING, frozenset({S.GRADING}), S.JUDGED]
    assert sorted(s for part in parts for s in part) == sorted(S.ACCEPTED)
    assert {S.QUEUED, S.GRADING} == S.IN_GRADING and S.IN_GRADING <= S.ACCEPTED


def make_run(team: Team, track: Track, name: str, status: RunStatus, *, current: bool = True,
             **fields: object) -> Run:
    return Run.objects.create(track=track, team=team, name=name, status=status,
                              is_current=current, sha256="0" * 64, size=1, **fields)


@pytest.fixture
def runs(personas: Personas, tracks: dict[str, Track]) -> dict[str, Run]:
    """One AC run per status, a replaced version, and a PR run."""
    team = personas.campaign.teams.get(name="WASEDA")
    ac, pr = tracks["ac"], tracks["pr"]
    made = {status.value: make_run(team, ac, f"WASEDA-AC-{status.value}", status)
            for status in RunStatus if status != S.INVALID}
    # Rejected uploads are never current: the current version stays whatever it was.
    made["invalid"] = make_run(team, ac, "WASEDA-AC-valid", S.INVALID, current=False)
    made["replaced"] = make_run(team, ac, "WASEDA-AC-graded", S.GRADED, current=False)
    made["pr"] = make_run(team, pr, "WASEDA-PO-1", S.VALID)
    graded_at = timezone.now() - timedelta(hours=1)
    made["requeued"] = make_run(team, ac, "WASEDA-AC-requeued", S.QUEUED, graded_at=graded_at)
    made["failed-requeued"] = make_run(team, ac, "WASEDA-AC-failed-requeued", S.QUEUED,
                                       graded_at=graded_at, failure_reason="judge down")
    return made


def keys(found: Iterable[Run], runs: dict[str, Run]) -> set[str]:
    """Which of `runs` a query found."""
    ids = {run.pk for run in found}
    return {key for key, run in runs.items() if run.pk in ids}


def test_current_leaves_out_replaced_and_rejected_versions(runs: dict[str, Run]) -> None:
    assert keys(Run.objects.current(), runs) == set(runs) - {"replaced", "invalid"}


def test_accepted_leaves_out_received_and_invalid_uploads(runs: dict[str, Run]) -> None:
    assert keys(Run.objects.accepted(), runs) == set(runs) - {"received", "invalid"}


def test_of_kinds_keeps_the_kinds_with_those_facts(runs: dict[str, Run]) -> None:
    assert keys(Run.objects.of_kinds(shared=True), runs) == {"pr"}
    assert "pr" not in keys(Run.objects.of_kinds(graded=True), runs)
    assert keys(Run.objects.of_kinds(graded=True), runs) == set(runs) - {"pr"}


def test_in_grading_is_queued_or_being_graded(runs: dict[str, Run]) -> None:
    assert keys(Run.objects.in_grading(), runs) == {
        "queued", "grading", "requeued", "failed-requeued"}


def test_judged_keeps_a_run_queued_again_after_a_grading_that_succeeded(
    runs: dict[str, Run],
) -> None:
    # A run queued for its first grading, or again after a failed one, has no complete
    # labels; one queued again after an edit still has all of its last grading's.
    assert keys(Run.objects.current().judged(), runs) == {"graded", "scored", "requeued"}


def test_the_methods_chain(runs: dict[str, Run]) -> None:
    chained = Run.objects.of_kinds(answers=True).current().accepted().in_grading()
    assert keys(chained, runs) == {"queued", "grading", "requeued", "failed-requeued"}
