"""Who sees which runs: own team always, shared PR runs after pr_due, nothing else."""

from __future__ import annotations

import io
import zipfile

import pytest

from campaign.api import no_such_campaign
from submissions.api import RUN_NOT_FOUND
from submissions.formats.upload_window import campaign_time
from tests.support import Personas, Upload, example, share_pr_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(upload: Upload) -> dict[str, int]:
    """Team A has a PR run; team B a PR run and an AC run (citing its own PR run)."""
    ac = b"<D003>\nMars;95\n1;KYOTO-PG-1;1;Mercury is about 4,879 km across.\n</D003>\n"
    return {
        "WASEDA-PO-1": upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1")).json()["id"],
        "KYOTO-PG-1": upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1")).json()["id"],
        "KYOTO-AC-1": upload("participant_b", "KYOTO-AC-1", ac).json()["id"],
    }


def listed(personas: Personas, who: str, query: str = "") -> set[str]:
    response = personas.client(who).get(f"/api/v1/campaigns/toy/runs/{query}")
    assert response.status_code == 200, response.json()
    return {run["name"] for run in response.json()}


class TestBeforeThePrDeadline:
    @pytest.mark.parametrize(
        ("who", "expected"),
        [
            ("organiser", {"WASEDA-PO-1", "KYOTO-PG-1", "KYOTO-AC-1"}),
            ("participant_a", {"WASEDA-PO-1"}),
            ("participant_b", {"KYOTO-PG-1", "KYOTO-AC-1"}),
            ("outsider", set()),
        ],
    )
    def test_each_persona_lists_only_what_it_may_see(
        self, personas: Personas, runs: dict[str, int], who: str, expected: set[str]
    ) -> None:
        assert listed(personas, who) == expected
        assert listed(personas, who, "?shared=1") == set()

    @pytest.mark.parametrize("who", ["participant_a", "outsider"])
    @pytest.mark.parametrize("path", ["/api/v1/runs/{id}/", "/api/v1/runs/{id}/file/"])
    def test_no_one_else_can_fetch_a_teams_unshared_run(
        self, personas: Personas, runs: dict[str, int], who: str, path: str
    ) -> None:
        response = personas.client(who).get(path.format(id=runs["KYOTO-PG-1"]))
        assert response.status_code == 404
        assert response.json()["detail"] == RUN_NOT_FOUND

    def test_the_team_downloads_its_own_run(self, personas: Personas, runs: dict[str, int]) -> None:
        response = personas.client("participant_b").get(f"/api/v1/runs/{runs['KYOTO-PG-1']}/file/")
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == example("KYOTO-PG-1")  # type: ignore[attr-defined]

    def test_the_shared_bundle_is_refused_until_the_deadline(
        self, personas: Personas, runs: dict[str, int]
    ) -> None:
        # 404: not there yet for anyone (docs/access.md), saying when (the timeline
        # is public).
        response = personas.client("participant_a").get("/api/v1/campaigns/toy/shared-pr-runs.zip")
        assert response.status_code == 404
        assert response.json()["detail"] == (
            f"PR runs of toy are shared with all teams after "
            f"{campaign_time(personas.campaign.pr_due, 'Asia/Tokyo')} (Asia/Tokyo)"
        )

    def test_anonymous_visitors_are_asked_to_authenticate(
        self, personas: Personas, runs: dict[str, int]
    ) -> None:
        assert personas.client("anonymous").get("/api/v1/campaigns/toy/runs/").status_code == 401
        response = personas.client("anonymous").get(f"/api/v1/runs/{runs['KYOTO-PG-1']}/")
        assert response.status_code == 401


class TestAfterThePrDeadline:
    def test_every_participant_sees_the_shared_pr_runs_but_not_other_teams_ac_runs(
        self, personas: Personas, runs: dict[str, int]
    ) -> None:
        share_pr_runs(personas)
        assert listed(personas, "participant_a", "?shared=1") == {"WASEDA-PO-1", "KYOTO-PG-1"}
        client = personas.client("participant_a")
        assert client.get(f"/api/v1/runs/{runs['KYOTO-PG-1']}/").status_code == 200
        assert client.get(f"/api/v1/runs/{runs['KYOTO-AC-1']}/").status_code == 404
        assert listed(personas, "outsider", "?shared=1") == set()

    def test_the_shared_bundle_holds_every_valid_pr_run_under_its_name(
        self, personas: Personas, runs: dict[str, int]
    ) -> None:
        share_pr_runs(personas)
        response = personas.client("participant_a").get("/api/v1/campaigns/toy/shared-pr-runs.zip")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/zip"
        archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))  # type: ignore[attr-defined]
        assert sorted(archive.namelist()) == ["KYOTO-PG-1", "WASEDA-PO-1"]
        assert archive.read("KYOTO-PG-1") == example("KYOTO-PG-1")

    def test_outsiders_get_no_bundle(self, personas: Personas, runs: dict[str, int]) -> None:
        share_pr_runs(personas)
        response = personas.client("outsider").get("/api/v1/campaigns/toy/shared-pr-runs.zip")
        assert (response.status_code, response.json()["detail"]) == (
            404, no_such_campaign("toy", personas.outsider))
        # Exactly as for a campaign that does not exist.
        missing = personas.client("outsider").get("/api/v1/campaigns/nope/shared-pr-runs.zip")
        assert missing.json()["detail"] == no_such_campaign("nope", personas.outsider)
        assert no_such_campaign("toy", personas.outsider).startswith("no campaign 'toy' ")
