"""Leaderboards from judgments: the toy numbers exactly, snapshots, and who sees what when."""

from __future__ import annotations

import io
import math
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from grading.judge import OpenAIJudge
from grading.services import run_grade
from scoring.models import Evaluation
from scoring.services import campaign_score
from submissions.formats.qrels import parse_pr_qrels
from submissions.models import Run
from tests.support import Personas, example

pytestmark = pytest.mark.django_db

PERSONAS = ["organiser", "participant_a", "participant_b", "outsider", "anonymous"]


@pytest.fixture
def scored(toy_ac_run: Run, judge: OpenAIJudge) -> list[Evaluation]:
    from grading.services import run_grading_finish

    run_grade(run=toy_ac_run, judge=judge)
    Run.objects.filter(pk=toy_ac_run.pk).update(status="grading")
    run_grading_finish(run=toy_ac_run)
    return campaign_score(campaign=toy_ac_run.track.campaign)


def boards(personas: Personas, who: str) -> dict[str, Any]:
    response = personas.client(who).get("/api/v1/campaigns/toy/leaderboards/")
    assert response.status_code == 200
    return {board["track"]: board for board in response.json()["leaderboards"]}


def test_the_toy_run_scores_exactly_as_shared_examples_readme_says(
    personas: Personas, scored: list[Evaluation]
) -> None:
    # shared/examples/README.md: accuracy 2/3; mean nugget precision 5/9; O = 0.90,
    # U = 0.55; R_O = 0.10; R_U = 1 - 0.55/2 = 0.725; HMR = 2*0.1*0.725/0.825.
    [row] = boards(personas, "organiser")["ac"]["rows"]
    assert row["run"] == "WASEDA-AC-1" and row["team"] == "WASEDA"
    assert row["accuracy"] == pytest.approx(2 / 3, abs=1e-12)
    assert row["nugget_precision"] == pytest.approx(5 / 9, abs=1e-12)
    assert row["r_o"] == pytest.approx(0.1, abs=1e-12)
    assert row["r_u"] == pytest.approx(0.725, abs=1e-12)
    assert round(row["hmr"], 5) == 0.17576


def test_the_pr_qrels_are_derived_from_the_marked_run(personas: Personas,
                                                      scored: list[Evaluation]) -> None:
    expected = parse_pr_qrels(io.BytesIO(example("pr.qrels")))
    assert expected.ok
    want: dict[str, dict[str, int]] = {}
    for record in expected.records:
        want.setdefault(record.qid, {})[str(record.passage_key)] = record.grade
    response = personas.client("organiser").get("/api/v1/campaigns/toy/qrels/")
    assert response.content == example("pr.qrels")
    pr = next(e for e in scored if e.track.kind == "pr")
    assert pr.qrels == want


def test_pr_runs_get_ndcg_and_ntcir_measures(personas: Personas,
                                             scored: list[Evaluation]) -> None:
    rows = {row["run"]: row for row in boards(personas, "organiser")["pr"]["rows"]}
    assert set(rows) == {"WASEDA-PO-1", "KYOTO-PG-1"}
    for row in rows.values():
        assert {"ndcg@10", "ndcg@20", "q_measure", "nerr@10"} <= set(row)
    # Hand-computed from pr.qrels (linear gain, log2(rank + 1) discount, Jarvelin &
    # Kekalainen 2002 as trec_eval's ndcg_cut): D001 and D003 have relevant passages.
    # D003's ideal DCG is 1 + 1/log2(3) (two passages of grade 1).
    ideal_d003 = 1 + 1 / math.log2(3)
    # KYOTO-PG-1: nothing relevant for D001; its own rank 1 is relevant for D003.
    assert rows["KYOTO-PG-1"]["ndcg@10"] == pytest.approx((0 + 1 / ideal_d003) / 2, abs=1e-12)
    # WASEDA-PO-1: ranks 1 and 2 of D001 are its ideal ranking; rank 1 of D003 counts.
    assert rows["WASEDA-PO-1"]["ndcg@10"] == pytest.approx((1 + 1 / ideal_d003) / 2, abs=1e-12)


def test_re_scoring_unchanged_judgments_gives_identical_numbers(
    toy_ac_run: Run, scored: list[Evaluation]
) -> None:
    again = campaign_score(campaign=toy_ac_run.track.campaign)
    for first, second in zip(scored, again, strict=True):
        assert first.fingerprint == second.fingerprint
        assert first.statistics == second.statistics
        assert [s.aggregates for s in first.scores.all()] == \
               [s.aggregates for s in second.scores.all()]


class TestVisibility:
    @pytest.mark.parametrize("who", PERSONAS[1:])
    def test_an_unpublished_leaderboard_is_for_organisers_only(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        assert boards(personas, "organiser").keys() == {"ac", "pr"}
        assert boards(personas, who) == {}

    @pytest.mark.parametrize(("who", "sees"), [
        ("participant_a", True), ("participant_b", True), ("outsider", False),
        ("anonymous", False)])
    def test_a_published_leaderboard_reaches_participants_before_results_release(
        self, personas: Personas, scored: list[Evaluation], who: str, sees: bool
    ) -> None:
        assert personas.client("organiser").post(
            "/api/v1/campaigns/toy/leaderboards/ac/publish/").status_code == 200
        assert ("ac" in boards(personas, who)) is sees

    @pytest.mark.parametrize("who", PERSONAS)
    def test_the_public_sees_it_after_results_release(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        personas.client("organiser").post("/api/v1/campaigns/toy/leaderboards/ac/publish/")
        campaign = personas.campaign
        now = timezone.now()
        campaign.topics_release, campaign.pr_due = now - timedelta(days=3), now - timedelta(days=2)
        campaign.ac_due, campaign.results_release = now - timedelta(days=1), now
        campaign.save()
        assert "ac" in boards(personas, who)
        assert "pr" not in boards(personas, who) or who == "organiser"

    @pytest.mark.parametrize("who", ["participant_a", "outsider"])
    def test_only_organisers_publish(self, personas: Personas, scored: list[Evaluation],
                                     who: str) -> None:
        response = personas.client(who).post("/api/v1/campaigns/toy/leaderboards/ac/publish/")
        assert response.status_code == 403

    def test_a_team_sees_its_own_scores_early_only_if_allowed(
        self, personas: Personas, scored: list[Evaluation], toy_ac_run: Run
    ) -> None:
        url = f"/api/v1/runs/{toy_ac_run.pk}/scores/"
        assert personas.client("participant_a").get(url).status_code == 404
        personas.campaign.teams_see_own_scores = True
        personas.campaign.save()
        response = personas.client("participant_a").get(url)
        assert response.status_code == 200
        assert response.json()["per_question"]["correct"] == {"D001": 1.0, "D002": 0.0,
                                                              "D003": 1.0}
        assert personas.client("participant_b").get(url).status_code == 404


def test_leaderboards_come_as_csv(personas: Personas, scored: list[Evaluation]) -> None:
    response = personas.client("organiser").get("/api/v1/campaigns/toy/leaderboards/?format=csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("track,run,team,accuracy,nugget_precision,r_o,r_u,hmr")
    assert any(line.startswith("ac,WASEDA-AC-1,WASEDA,0.6666666666666666,") for line in lines)


def test_organisers_export_latex_res_and_marked_runs(personas: Personas,
                                                     scored: list[Evaluation]) -> None:
    client = personas.client("organiser")
    tex = client.get("/api/v1/campaigns/toy/exports/leaderboards.tex").content.decode()
    assert "\\begin{tabular}" in tex and "WASEDA-AC-1" in tex and "0.1758" in tex
    import zipfile

    marked = zipfile.ZipFile(io.BytesIO(client.get(
        "/api/v1/campaigns/toy/exports/marked.zip").content))
    assert marked.read("WASEDA-AC-1.marked") == example("WASEDA-AC-1.marked")
    res = zipfile.ZipFile(io.BytesIO(client.get("/api/v1/campaigns/toy/exports/res.zip").content))
    assert sorted(res.namelist()) == ["KYOTO-PG-1.res", "WASEDA-PO-1.res"]
    assert client.get("/api/v1/campaigns/toy/exports/nope").status_code == 404
    assert personas.client("participant_a").get(
        "/api/v1/campaigns/toy/exports/res.zip").status_code == 403
