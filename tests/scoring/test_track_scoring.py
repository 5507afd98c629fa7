"""Scoring a campaign writes each snapshot's rows at once: one insert of
per-question scores per evaluation, whatever the number of runs."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scoring.models import RunScore
from scoring.services import campaign_score
from submissions.models import Run

pytestmark = pytest.mark.django_db


def test_each_snapshot_stores_its_runs_scores_in_one_insert(graded_toy_run: Run) -> None:
    with CaptureQueriesContext(connection) as queries:
        evaluations = campaign_score(campaign=graded_toy_run.track.campaign)

    inserts = [q["sql"] for q in queries.captured_queries
               if q["sql"].startswith('INSERT INTO "scoring_runscore"')]
    runs = {e.track.kind: RunScore.objects.filter(evaluation=e).count() for e in evaluations}
    # the toy campaign: one AC run, two PR runs (tests/data/README.md)
    assert runs == {"ac": 1, "pr": 2}
    assert len(inserts) == len(evaluations) == 2
    pr = next(e for e in evaluations if e.track.kind == "pr")
    assert set(pr.scores.get(run__name="KYOTO-PG-1").per_question) >= {
        "ndcg@10", "ndcg@20", "q_measure", "nerr@10", "nerr@20", "ms_ndcg@10", "ms_ndcg@20"}
