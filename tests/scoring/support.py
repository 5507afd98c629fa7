"""Helpers for the scoring tests: leaderboards as a persona sees them, and the toy
campaign's expected scores (tests/data/README.md works them out by hand)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import Personas

PERSONAS = ["organiser", "participant_a", "participant_b", "outsider", "anonymous"]


def publish_url(track: str) -> str:
    return f"/api/v1/campaigns/toy/leaderboards/{track}/publish/"


def boards(personas: Personas, who: str) -> dict[str, Any]:
    """The leaderboards `who` gets from the API, by track."""
    response = personas.client(who).get("/api/v1/campaigns/toy/leaderboards/")
    assert response.status_code == 200
    return {board["track"]: board for board in response.json()["leaderboards"]}


def assert_toy_ac_scores(row: dict[str, Any]) -> None:
    """WASEDA-AC-1 as tests/data/README.md computes it (R2C2 task definition,
    docs/measures.md): I+ = {D001, D003}, I- = {D002}, p = 0.75, 0.85, 0.95.
    accuracy 2/3; nugget precision (2/3 + 0 + 2/3) / 3 = 4/9; O = 0.85 -> R_O = 0.15;
    U = 0.25 + 0.05 = 0.30 -> R_U = 1 - 0.30/2 = 0.85; HMR = 2 * 0.15 * 0.85 / 1.0 = 0.255;
    ECE = (0.25 + 0.85 + 0.05) / 3 = 0.383333; Brier = (0.0625 + 0.7225 + 0.0025) / 3."""
    assert row["accuracy"] == pytest.approx(2 / 3, abs=1e-12)
    assert row["nugget_precision"] == pytest.approx(4 / 9, abs=1e-12)
    assert row["r_o"] == pytest.approx(0.15, abs=1e-12)
    assert row["r_u"] == pytest.approx(0.85, abs=1e-12)
    assert row["hmr"] == pytest.approx(0.255, abs=1e-12)
    assert row["ece"] == pytest.approx(0.383333, abs=1e-6)
    assert row["brier"] == pytest.approx(0.2625, abs=1e-12)


# tests/data/README.md, PR measures on the derived qrels (D001 WASEDA-PO-1:1 grade 2;
# D003 WASEDA-PO-1:1 and KYOTO-PG-1:1 grade 1; D002 none, so means over D001 and D003):
# nDCG@10 (Jarvelin & Kekalainen 2002): WASEDA (1 + 0.613147) / 2, KYOTO (0 + 0.613147) / 2
# with 0.613147 = 1 / (1 + 1/log2 3); Q (Sakai 2004, beta = 1): (1 + 0.5) / 2, (0 + 0.5) / 2;
# nERR@10 (Chapelle et al. 2009, g_max = 2): (1 + 0.75) / 2, (0 + 0.75) / 2.
TOY_PR_SCORES = {
    "WASEDA-PO-1": {"ndcg@10": 0.806574, "ndcg@20": 0.806574, "q_measure": 0.75,
                    "nerr@10": 0.875},
    "KYOTO-PG-1": {"ndcg@10": 0.306574, "ndcg@20": 0.306574, "q_measure": 0.25,
                   "nerr@10": 0.375},
}


def assert_toy_pr_scores(rows: list[dict[str, Any]]) -> None:
    """Both toy PR runs score as tests/data/README.md says, WASEDA-PO-1 ranked first."""
    assert [row["run"] for row in rows] == ["WASEDA-PO-1", "KYOTO-PG-1"]
    for row in rows:
        for measure, value in TOY_PR_SCORES[row["run"]].items():
            assert row[measure] == pytest.approx(value, abs=1e-6), (row["run"], measure)
