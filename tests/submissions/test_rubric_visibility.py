"""Who sees ranking and response runs (docs/access.md: own team and organisers only;
never shared like PR runs), through the API and on the pages."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from submissions.api import RUN_NOT_FOUND
from submissions.models import RankedPassage, Run
from tests.grading.rubric_support import rubric_run
from tests.support import Personas, Upload, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(rubric_upload: Upload) -> dict[str, int]:
    """WASEDA has a ranking run and an invalid response upload; KYOTO a response run."""
    ids = {
        "WASEDA-bm25": rubric_upload("participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"),
                                     track="dl").json()["id"],
        "WASEDA-gen": rubric_upload("participant_a", "WASEDA-gen", b'{"qid": "q9", "text": "?"}\n',
                                    track="gen").json()["run"]["id"],
        "KYOTO-llm": rubric_upload("participant_b", "KYOTO-llm", rubric_run("KYOTO-llm"),
                                   track="gen").json()["id"],
    }
    assert Run.objects.count() == 3
    return ids


def listed(personas: Personas, who: str) -> set[str]:
    response = personas.client(who).get("/api/v1/campaigns/movie-rubric/runs/")
    assert response.status_code == 200, response.json()
    return {run["name"] for run in response.json()}


@pytest.mark.parametrize(("who", "expected"), [
    ("organiser", {"WASEDA-bm25", "WASEDA-gen", "KYOTO-llm"}),
    ("participant_a", {"WASEDA-bm25", "WASEDA-gen"}),
    ("participant_b", {"KYOTO-llm"}),
    ("outsider", set()),
])
def test_each_persona_lists_only_what_it_may_see(
    rubric: Personas, runs: dict[str, int], who: str, expected: set[str]
) -> None:
    # The R2C2 deadlines are past (the fixture), yet nothing is shared: only PR runs are.
    assert listed(rubric, who) == expected


@pytest.mark.parametrize("who", ["participant_a", "outsider"])
@pytest.mark.parametrize("path", ["/api/v1/runs/{id}/", "/api/v1/runs/{id}/file/"])
def test_another_team_cannot_fetch_a_run_it_answers_404_as_if_it_did_not_exist(
    rubric: Personas, runs: dict[str, int], who: str, path: str
) -> None:
    response = rubric.client(who).get(path.format(id=runs["KYOTO-llm"]))
    assert response.status_code == 404
    assert response.json()["detail"] == RUN_NOT_FOUND


def test_anonymous_gets_nothing(rubric: Personas, runs: dict[str, int]) -> None:
    response = rubric.client("anonymous").get(f"/api/v1/runs/{runs['KYOTO-llm']}/")
    assert response.status_code == 401
    assert "KYOTO" not in response.content.decode()


def test_the_team_and_the_organisers_read_the_run_and_its_report(
    rubric: Personas, runs: dict[str, int]
) -> None:
    for who in ("participant_a", "organiser"):
        good = rubric.client(who).get(f"/api/v1/runs/{runs['WASEDA-bm25']}/").json()
        bad = rubric.client(who).get(f"/api/v1/runs/{runs['WASEDA-gen']}/").json()
        assert (good["kind"], good["status"], good["questions"], good["records"]) == (
            "ranking", "valid", 2, 5)
        assert (bad["kind"], bad["status"]) == ("response", "invalid")
        assert [(e["line"], e["field"]) for e in bad["validation_report"]] == [(1, "qid")]


class TestPages:
    def test_the_run_page_shows_status_counts_and_report(
        self, rubric: Personas, runs: dict[str, int]
    ) -> None:
        client = signed_in(rubric, "participant_a")
        ranking = client.get(f"/runs/{runs['WASEDA-bm25']}/").content.decode()
        invalid = client.get(f"/runs/{runs['WASEDA-gen']}/").content.decode()

        assert "dl: Ranking (TREC run)" in ranking and "2 queries, 5 passages" in ranking
        assert "Valid" in ranking and "Validation report" not in ranking
        assert "Validation report" in invalid and "<td>1</td><td>qid</td>" in invalid
        assert "which is not a query of this campaign" in invalid

    def test_the_run_page_of_a_response_run_counts_segments(
        self, rubric: Personas, runs: dict[str, int]
    ) -> None:
        page = signed_in(rubric, "participant_b").get(f"/runs/{runs['KYOTO-llm']}/")
        assert "2 queries, 3 segments" in page.content.decode()

    def test_another_teams_run_page_is_a_404(self, rubric: Personas, runs: dict[str, int]) -> None:
        page = signed_in(rubric, "participant_a").get(f"/runs/{runs['KYOTO-llm']}/")
        assert page.status_code == 404

    def test_the_team_page_lists_the_teams_runs_only(
        self, rubric: Personas, runs: dict[str, int]
    ) -> None:
        page = signed_in(rubric, "participant_a").get("/campaigns/movie-rubric/team/")
        html = page.content.decode()

        assert page.status_code == 200
        assert f'href="/runs/{runs["WASEDA-bm25"]}/">WASEDA-bm25</a>' in html
        assert "(1 problems)" in html and "KYOTO-llm" not in html

    def test_the_runs_page_says_nothing_of_shared_pr_runs(
        self, rubric: Personas, runs: dict[str, int]
    ) -> None:
        html = signed_in(rubric, "organiser").get("/campaigns/movie-rubric/runs/").content.decode()
        assert "KYOTO-llm" in html and "WASEDA-bm25" in html
        assert "Shared PR runs" not in html

    def test_the_upload_page_takes_a_ranking_run(self, rubric: Personas) -> None:
        client = signed_in(rubric, "participant_a")
        form = client.get("/campaigns/movie-rubric/runs/upload/").content.decode()
        response = client.post("/campaigns/movie-rubric/runs/upload/", {
            "track": "dl", "name": "WASEDA-bm25", "description": "",
            "file": SimpleUploadedFile("run.txt", rubric_run("WASEDA-bm25")),
        })

        assert "[Team]-[label] for ranking runs (TREC format)" in form
        run = Run.objects.get(name="WASEDA-bm25")
        assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
        assert RankedPassage.objects.filter(run=run).count() == 5

    def test_the_upload_page_shows_a_bad_response_runs_problems_inline(
        self, rubric: Personas
    ) -> None:
        response = signed_in(rubric, "participant_a").post("/campaigns/movie-rubric/runs/upload/", {
            "track": "gen", "name": "WASEDA-gen", "description": "",
            "file": SimpleUploadedFile("gen.jsonl", b'{"qid": "q1", "text": ""}\nnot json\n'),
        })
        html = response.content.decode()

        assert response.status_code == 400
        assert "WASEDA-gen was not accepted: 2 problem(s) in the file; nothing was stored" in html
        assert "<td>1</td><td>text</td>" in html and "<td>2</td><td>line</td>" in html
        assert not RankedPassage.objects.exists()
