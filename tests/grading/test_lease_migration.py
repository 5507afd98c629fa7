"""The migration that moved the grading claim off the run: every run QUEUED or GRADING keeps
its claim, now as a round in parts (a large run's chunks as its parts), and nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from grading.models import GradingJob, GradingPart, PartStatus
from submissions.models import Run, RunStatus

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("grading", "0009_decided_by_second_judge"), ("submissions", "0008_quota_overrides")]


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection)


@pytest.fixture(autouse=True)
def latest_schema_after() -> Iterator[None]:
    """Every app back at its latest migration, whatever the test left."""
    yield
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_runs_in_grading_keep_their_claims_as_rounds(toy_ac_run: Run) -> None:
    queued = Run.objects.get(pk=toy_ac_run.pk)
    queued.pk, queued.name = None, "WASEDA-AC-2"
    queued.save()
    chunked = Run.objects.get(pk=toy_ac_run.pk)
    chunked.pk, chunked.name = None, "WASEDA-AC-3"
    chunked.save()
    beat = timezone.now() - timedelta(minutes=3)

    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    OldRun = old.get_model("submissions", "Run")
    OldRun.objects.filter(pk=toy_ac_run.pk).update(
        status="grading", grading_token="task-1", grading_heartbeat=beat, grading_requeues=2)
    OldRun.objects.filter(pk=queued.pk).update(status="queued", grading_heartbeat=beat,
                                               grading_requeues=1)
    OldRun.objects.filter(pk=chunked.pk).update(status="grading", grading_token="round-1",
                                                grading_heartbeat=beat)
    chunk = old.get_model("grading", "GradingChunk")
    chunk.objects.create(run_id=chunked.pk, round="round-0", number=1, qids=["D001"])  # stale
    chunk.objects.create(run_id=chunked.pk, round="round-1", number=1, qids=["D001"],
                         status="graded", token="c1", heartbeat=beat, graded_by="w1",
                         entailment_calls=3, answer_calls=1)
    chunk.objects.create(run_id=chunked.pk, round="round-1", number=2, qids=["D002", "D003"],
                         status="grading", token="c2", heartbeat=beat, requeues=1)

    migrate([("grading", "0010_grading_jobs"), ("submissions", "0009_grading_lease_moved")])

    def parts(run: Run) -> list[tuple[object, ...]]:
        return [(p.number, p.qids, p.status, p.token, p.heartbeat, p.requeues, p.judge_calls)
                for p in GradingPart.objects.filter(job__run=run).order_by("number")]

    assert parts(toy_ac_run) == [(1, None, PartStatus.GRADING, "task-1", beat, 2, 0)]
    assert parts(queued) == [(1, None, PartStatus.QUEUED, "", beat, 1, 0)]
    assert parts(chunked) == [(1, ["D001"], PartStatus.GRADED, "c1", beat, 0, 4),
                              (2, ["D002", "D003"], PartStatus.GRADING, "c2", beat, 1, 0)]
    jobs = GradingJob.objects.order_by("run_id")
    assert [(j.run_id, j.round, j.heartbeat) for j in jobs] == [
        (toy_ac_run.pk, "task-1", beat), (queued.pk, jobs[1].round, beat),
        (chunked.pk, "round-1", beat)]
    assert jobs[1].round  # a round of its own
    assert Run.objects.get(pk=queued.pk).status == RunStatus.QUEUED
    # The PR runs, never graded, got no round.
    assert GradingJob.objects.count() == 3
