"""`POST /api/v1/campaigns/{slug}/scoring/`: organisers recompute
every leaderboard from the current judgments; everyone else is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from grading.models import Judgment
from grading.review.edits import judgment_edit
from scoring.models import Evaluation
from submissions.models import Run
from tests.scoring.support import (
    assert_toy_ac_scores,
    assert_toy_pr_scores,
    boards,
    publish_url,
)
from tests.support import Personas

pytestmark = pytest.mark.django_db

SCORING = "/api/v1/campaigns/toy/scoring/"
Capture = Callable[..., Any]


def test_an_organiser_recomputes_every_leaderboard(
    personas: Personas, graded_toy_run: Run, celery_eager: None,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    assert not Evaluation.objects.exists()

    # The scoring task is sent when the request commits, and runs here (eager Celery).
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = personas.client("organiser").post(SCORING)

    assert response.status_code == 202
    assert response.json()["detail"] == "scoring of toy queued"
    assert response.json()["task"]
    assert len(queued) == 1
    assert sorted(Evaluation.objects.values_list("track__slug", flat=True)) == ["ac", "pr"]
    board = boards(personas, "organiser")
    [row] = board["ac"]["rows"]
    assert row["run"] == "WASEDA-AC-1"
    assert_toy_ac_scores(row)
    assert_toy_pr_scores(board["pr"]["rows"])
    assert board["ac"]["published"] is False


def test_recomputing_after_an_edit_gives_a_new_snapshot_and_keeps_the_published_one(
    personas: Personas, scored: list[Evaluation], celery_eager: None,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    organiser = personas.client("organiser")
    assert organiser.post(publish_url("ac")).status_code == 200
    published_ac, _ = scored
    # The organiser decides "Buzz Aldrin" is right after all, from nugget 1 (WASEDA-PO-1
    # rank 2); nugget 2 stays bogus.
    judgment_edit(judgment=Judgment.objects.get(kind="answer", input__answer="Buzz Aldrin"),
                  user=personas.organiser, changes={"correct": True, "relevant": [1]},
                  reason="Aldrin also walked on the Moon", note="accept D002")

    with django_capture_on_commit_callbacks(execute=True):
        assert organiser.post(SCORING).status_code == 202

    # By hand (docs/measures.md), all three answers now correct, p = 0.75, 0.85, 0.95:
    # accuracy 3/3; I- empty so R_O = 1; U = 0.25 + 0.15 + 0.05 = 0.45, R_U = 1 - 0.45/3
    # = 0.85; HMR = 2 * 1 * 0.85 / 1.85 = 0.918919; nugget precision (2/3 + 1/2 + 2/3) / 3
    # = 11/18; ECE = 0.45 / 3 = 0.15; Brier = (0.0625 + 0.0225 + 0.0025) / 3 = 0.029167.
    latest = boards(personas, "organiser")
    assert latest["ac"]["evaluation"] not in {e.pk for e in scored}
    [row] = latest["ac"]["rows"]
    assert row["accuracy"] == 1.0
    assert (row["r_o"], row["r_u"]) == (1.0, pytest.approx(0.85, abs=1e-12))
    assert row["hmr"] == pytest.approx(0.918919, abs=1e-6)
    assert row["nugget_precision"] == pytest.approx(11 / 18, abs=1e-12)
    assert row["ece"] == pytest.approx(0.15, abs=1e-12)
    assert row["brier"] == pytest.approx(0.029167, abs=1e-6)
    # D002 now has a relevant passage, WASEDA-PO-1:2 (grade 1), and counts in the PR mean:
    # WASEDA-PO-1 has it at rank 2, nDCG 1/log2(3) = 0.630930, so (1 + 0.630930 +
    # 0.613147) / 3 = 0.748026; KYOTO-PG-1 does not, (0 + 0 + 0.613147) / 3 = 0.204382.
    pr = {r["run"]: r for r in latest["pr"]["rows"]}
    assert latest["pr"]["evaluation"] not in {e.pk for e in scored}
    assert pr["WASEDA-PO-1"]["ndcg@10"] == pytest.approx(0.748026, abs=1e-6)
    assert pr["KYOTO-PG-1"]["ndcg@10"] == pytest.approx(0.204382, abs=1e-6)
    # Recomputing publishes nothing: participants keep the snapshot the organiser published,
    # which still says what it said.
    seen = boards(personas, "participant_b")
    assert seen.keys() == {"ac"}
    assert seen["ac"]["evaluation"] == published_ac.pk
    assert_toy_ac_scores(seen["ac"]["rows"][0])
    assert latest["ac"]["published"] is False


@pytest.mark.parametrize(("who", "status"), [
    ("participant_a", 403), ("participant_b", 403), ("outsider", 403), ("anonymous", 401)])
def test_no_one_else_may_recompute(
    personas: Personas, graded_toy_run: Run, celery_eager: None,
    django_capture_on_commit_callbacks: Capture, who: str, status: int,
) -> None:
    # The campaign itself is public (docs/access.md: 403 for what one can see but
    # may not change); a token is needed first (401).
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = personas.client(who).post(SCORING)

    assert response.status_code == status
    if status == 403:
        assert response.json()["detail"] == "only the organisers of toy may do this"
    assert queued == []
    assert not Evaluation.objects.exists()


def test_an_unknown_campaign_is_a_404(
    personas: Personas, django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = personas.client("organiser").post("/api/v1/campaigns/nope/scoring/")

    assert response.status_code == 404
    assert "detail" in response.json()
    assert queued == []
