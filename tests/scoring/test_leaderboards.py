"""Leaderboards from judgments: the toy numbers exactly, snapshots, and who sees what when."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone

from campaign.models import Campaign
from scoring.models import Evaluation
from scoring.services import campaign_score
from submissions.formats.qrels import parse_pr_qrels
from submissions.models import Run
from tests.scoring.support import (
    PERSONAS,
    assert_toy_ac_scores,
    assert_toy_pr_scores,
    boards,
    publish_url,
)
from tests.support import Personas, example

pytestmark = pytest.mark.django_db


def release_results(campaign: Campaign) -> None:
    """Move the campaign past results_release: published leaderboards are public."""
    now = timezone.now()
    campaign.topics_release, campaign.pr_due = now - timedelta(days=3), now - timedelta(days=2)
    campaign.ac_due, campaign.results_release = now - timedelta(days=1), now
    campaign.save()


def published_tracks() -> set[str]:
    return set(Evaluation.objects.filter(published_at__isnull=False)
               .values_list("track__slug", flat=True))


def test_the_toy_run_scores_exactly_as_the_toy_readme_says(
    personas: Personas, scored: list[Evaluation]
) -> None:
    [row] = boards(personas, "organiser")["ac"]["rows"]
    assert row["run"] == "WASEDA-AC-1" and row["team"] == "WASEDA"
    assert_toy_ac_scores(row)


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
    rows = boards(personas, "organiser")["pr"]["rows"]
    for row in rows:
        assert {"ndcg@10", "ndcg@20", "q_measure", "nerr@10"} <= set(row)
    # Hand-computed in tests/data/README.md (and tests.scoring.support.TOY_PR_SCORES).
    assert_toy_pr_scores(rows)


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
        assert personas.client("organiser").post(publish_url("ac")).status_code == 200
        assert ("ac" in boards(personas, who)) is sees

    @pytest.mark.parametrize("who", PERSONAS)
    def test_the_public_sees_it_after_results_release(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        ac, _pr = scored
        response = personas.client("organiser").post(publish_url("ac"))
        assert response.status_code == 200
        assert (response.json()["evaluation"], response.json()["published"]) == (ac.pk, True)
        ac.refresh_from_db()
        assert ac.published_at is not None
        assert ac.published_by_id == personas.organiser.pk
        assert published_tracks() == {"ac"}
        release_results(personas.campaign)
        seen = boards(personas, who)
        assert seen["ac"]["evaluation"] == ac.pk
        assert_toy_ac_scores(seen["ac"]["rows"][0])
        assert "pr" not in seen or who == "organiser"

    @pytest.mark.parametrize(("who", "status"), [
        ("participant_a", 403), ("outsider", 403), ("anonymous", 401)])
    def test_only_organisers_publish(self, personas: Personas, scored: list[Evaluation],
                                     who: str, status: int) -> None:
        response = personas.client(who).post(publish_url("ac"))
        assert response.status_code == status
        if status == 403:
            assert response.json()["detail"] == "only the organisers of toy may do this"
        assert published_tracks() == set()
        assert boards(personas, "participant_b") == {}
        assert boards(personas, "organiser")["ac"]["published"] is False

    def test_a_track_not_scored_yet_cannot_be_published(
        self, personas: Personas, graded_toy_run: Run
    ) -> None:
        response = personas.client("organiser").post(publish_url("ac"))
        assert response.status_code == 404
        assert response.json()["detail"] == "track ac of toy has not been scored yet"
        assert not Evaluation.objects.exists()

    @pytest.mark.parametrize("who", PERSONAS[1:])
    def test_a_withdrawn_leaderboard_is_hidden_again_from_everyone_but_organisers(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        organiser = personas.client("organiser")
        assert organiser.post(publish_url("ac")).status_code == 200
        release_results(personas.campaign)
        assert "ac" in boards(personas, who)

        response = organiser.delete(publish_url("ac"))

        assert response.status_code == 204
        assert published_tracks() == set()
        ac = Evaluation.objects.get(pk=scored[0].pk)
        assert (ac.published_at, ac.published_by_id) == (None, None)
        assert boards(personas, who) == {}
        assert boards(personas, "organiser")["ac"]["published"] is False

    def test_withdrawing_hides_it_from_participants_before_results_release(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        organiser = personas.client("organiser")
        organiser.post(publish_url("ac"))
        organiser.post(publish_url("pr"))
        assert boards(personas, "participant_b").keys() == {"ac", "pr"}

        assert organiser.delete(publish_url("ac")).status_code == 204

        # Only the track named is withdrawn.
        assert boards(personas, "participant_b").keys() == {"pr"}
        assert published_tracks() == {"pr"}

    @pytest.mark.parametrize(("who", "status"), [
        ("participant_a", 403), ("outsider", 403), ("anonymous", 401)])
    def test_only_organisers_withdraw(self, personas: Personas, scored: list[Evaluation],
                                      who: str, status: int) -> None:
        assert personas.client("organiser").post(publish_url("ac")).status_code == 200

        assert personas.client(who).delete(publish_url("ac")).status_code == status

        assert published_tracks() == {"ac"}
        assert "ac" in boards(personas, "participant_b")

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
    assert "\\begin{tabular}" in tex
    # The toy numbers (tests/data/README.md) to four places; one AC run, so no HSD.
    assert ("1 & WASEDA-AC-1 & 0.6667 & 0.4444 & 0.1500 & 0.8500 & 0.2550 & 0.3833 & 0.2625"
            " & -- \\\\") in tex.splitlines()

    marked = zipfile.ZipFile(io.BytesIO(client.get(
        "/api/v1/campaigns/toy/exports/marked.zip").content))
    assert marked.read("WASEDA-AC-1.marked") == example("WASEDA-AC-1.marked")
    res = zipfile.ZipFile(io.BytesIO(client.get("/api/v1/campaigns/toy/exports/res.zip").content))
    assert sorted(res.namelist()) == ["KYOTO-PG-1.res", "WASEDA-PO-1.res"]
    assert client.get("/api/v1/campaigns/toy/exports/nope").status_code == 404
    # What only organisers see answers as if it did not exist (docs/access.md).
    assert personas.client("participant_a").get(
        "/api/v1/campaigns/toy/exports/res.zip").status_code == 404
