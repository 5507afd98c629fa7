"""Ranking and response runs that arrive without a track: a zip through the bulk API, or
files on disk through `submit_runs`. A `[Team]-[label]` name does not say which kind it
is: the campaign's only such track takes it, else the content tells."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from campaign.models import Track
from submissions.bulk import AMBIGUOUS_TRACK, BAD_ANY_RUN_NAME
from submissions.models import RankedPassage, Run, RunStatus
from tests.factories import TrackFactory
from tests.grading.rubric_support import RUBRIC_RUNS, rubric_run
from tests.support import Personas, make_zip

pytestmark = pytest.mark.django_db


def post_zip(personas: Personas, who: str, content: bytes, **fields: str) -> Any:
    return personas.client(who).post(
        "/api/v1/campaigns/movie-rubric/runs/bulk/",
        {"file": SimpleUploadedFile("runs.zip", content), **fields}, format="multipart")


def test_each_member_goes_to_the_track_its_content_shows(rubric: Personas) -> None:
    content = make_zip({
        "WASEDA-bm25": rubric_run("WASEDA-bm25"),
        "KYOTO-llm": rubric_run("KYOTO-llm"),
        "KYOTO-bad": b"q1 Q0 d1 1 x bm25\n",
        "WASEDA-AC-1": b"<q1>\nRidley Scott;90\n</q1>\n",
    })
    response = post_zip(rubric, "organiser", content)

    assert response.status_code == 207
    results = {r["member"]: r for r in response.json()["results"]}
    assert {member: r["status"] for member, r in results.items()} == {
        "WASEDA-bm25": 201, "KYOTO-llm": 201, "KYOTO-bad": 400, "WASEDA-AC-1": 400}
    assert (results["WASEDA-bm25"]["run"]["track"], results["KYOTO-llm"]["run"]["track"]) == (
        "dl", "gen")
    assert [(e["line"], e["field"]) for e in results["KYOTO-bad"]["errors"]] == [(1, "score")]
    # An R2C2 name in a campaign without that kind reads as [Team]-[label], team WASEDA-AC.
    assert results["WASEDA-AC-1"]["detail"].startswith("run WASEDA-AC-1 names team WASEDA-AC")
    assert set(Run.objects.filter(status=RunStatus.VALID).values_list("name", flat=True)) == {
        "WASEDA-bm25", "KYOTO-llm"}
    assert RankedPassage.objects.count() == 5 + 3


def test_a_name_of_no_kind_says_every_name_the_campaign_takes(rubric: Personas) -> None:
    response = post_zip(rubric, "organiser", make_zip({"notes.txt": b"hello"}))

    assert response.status_code == 400
    [result] = response.json()["results"]
    assert result["detail"] == BAD_ANY_RUN_NAME.format(
        name="notes.txt", expected="[Team]-[label] for a ranking or response run (label: "
                                   "letters, digits and '_', at most 32)")


def test_with_two_tracks_of_the_same_kind_the_track_must_be_named(rubric: Personas) -> None:
    TrackFactory.create(campaign=rubric.campaign, slug="dl2", kind="ranking",
                        own_due=Track.objects.get(slug="dl").own_due)
    content = make_zip({"WASEDA-bm25": rubric_run("WASEDA-bm25")})

    unnamed = post_zip(rubric, "participant_a", content)
    named = post_zip(rubric, "participant_a", content, track="dl2")

    assert unnamed.status_code == 400
    assert unnamed.json()["results"][0]["detail"] == AMBIGUOUS_TRACK.format(
        name="WASEDA-bm25", tracks="dl, dl2, gen")
    assert named.status_code == 201
    assert named.json()["results"][0]["run"]["track"] == "dl2"


def test_a_bulk_upload_to_an_unknown_track_is_refused_with_its_field(rubric: Personas) -> None:
    response = post_zip(rubric, "organiser", make_zip({"WASEDA-bm25": b""}), track="nope")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["track"]
    assert not Run.objects.exists()


class TestSubmitRuns:
    def run_command(self, *args: str) -> tuple[str, str]:
        out, err = io.StringIO(), io.StringIO()
        call_command("submit_runs", "movie-rubric", *args, stdout=out, stderr=err)
        return out.getvalue(), err.getvalue()

    def test_it_stores_ranking_and_response_runs_and_skips_them_the_second_time(
        self, rubric: Personas
    ) -> None:
        files = [str(RUBRIC_RUNS / "WASEDA-bm25"), str(RUBRIC_RUNS / "KYOTO-llm")]
        out, _ = self.run_command(*files, "--as", "olga")
        again, _ = self.run_command(*files, "--as", "olga")

        assert "stored as WASEDA-bm25" in out and "(run" in out and "5 records" in out
        assert "stored as KYOTO-llm" in out and "3 records" in out
        assert again.count("unchanged since its last upload, skipped") == 2
        assert dict(Run.objects.values_list("name", "track__slug")) == {
            "WASEDA-bm25": "dl", "KYOTO-llm": "gen"}

    def test_it_names_each_problem_with_its_line(
        self, rubric: Personas, tmp_path: Path
    ) -> None:
        bad = tmp_path / "WASEDA-gen"
        bad.write_bytes(b'{"qid": "q1", "text": "Fine."}\n{"qid": "q2"}\n')
        err = io.StringIO()

        with pytest.raises(CommandError, match="1 of 1 file"):
            call_command("submit_runs", "movie-rubric", str(bad), "--as", "alice",
                         stdout=io.StringIO(), stderr=err)
        assert "invalid, 1 problem(s)" in err.getvalue()
        assert "line 2, text: found no 'text' key" in err.getvalue()
        assert Run.objects.get().status == RunStatus.INVALID

    def test_the_track_option_puts_every_file_in_one_track(
        self, rubric: Personas, tmp_path: Path
    ) -> None:
        with pytest.raises(CommandError, match="has no track 'nope'"):
            self.run_command(str(RUBRIC_RUNS / "WASEDA-bm25"), "--as", "olga", "--track", "nope")
        out, _ = self.run_command(str(RUBRIC_RUNS / "WASEDA-bm25"), "--as", "olga",
                                  "--track", "dl")
        assert "stored as WASEDA-bm25" in out

