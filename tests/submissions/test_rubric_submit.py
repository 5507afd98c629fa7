"""Submitting ranking (TREC) and response (JSONL) runs of a RUBRIC campaign through the
REST API: stored whole with their passages, or not at all,
every problem named with its line, the track's own deadline and quota enforced."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from campaign.models import Track
from submissions import rubric_runs
from submissions.checks import BAD_RUBRIC_RUN_NAME, NOT_YOUR_TEAM, TOO_MANY_RUNS, UNKNOWN_TEAM
from submissions.formats.common import EMPTY_FIELD
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.response_run import DUPLICATE_RESPONSE
from submissions.formats.trec_run import (
    BAD_SCORE,
    DUPLICATE_DOCID,
    TAG_CHANGED,
    UNKNOWN_DOCID,
    UNKNOWN_QUERY,
)
from submissions.formats.upload_window import DEADLINE_PASSED, campaign_time
from submissions.models import RankedPassage, Run, RunStatus
from submissions.rubric_runs import SEGMENT_TOO_LONG
from submissions.services import INVALID_RUN
from tests.grading.rubric_support import rubric_run
from tests.support import Personas, Upload

pytestmark = pytest.mark.django_db


def stored_files(media: Path) -> list[Path]:
    return [path for path in media.rglob("*") if path.is_file()]


def passages(run_id: int) -> list[tuple[str, int, str, float | None, str]]:
    return list(RankedPassage.objects.filter(run_id=run_id).order_by("qid", "rank")
                .values_list("qid", "rank", "docid", "score", "text"))


class TestAGoodRun:
    def test_a_ranking_run_is_stored_in_trec_evals_order_without_copying_the_corpus(
        self, rubric_upload: Upload
    ) -> None:
        content = rubric_run("WASEDA-bm25")
        response = rubric_upload("participant_a", "WASEDA-bm25", content, track="dl",
                                 description="BM25, k1=0.9")

        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["kind"], body["track"], body["team"], body["status"]) == (
            "ranking", "dl", "WASEDA", "valid")
        assert (body["questions"], body["records"], body["size"]) == (2, 5, len(content))
        assert body["sha256"] == hashlib.sha256(content).hexdigest()
        assert Run.objects.get(pk=body["id"]).file.read() == content
        # tests/data/rubric/runs/README.md: the rank column orders nothing; scores do,
        # and the tie at 9.1 goes to the greater docid (trec_eval's comp_sim_docno).
        assert passages(body["id"]) == [
            ("q1", 1, "d1", 12.5, ""),
            ("q1", 2, "d3", 11.0, ""),
            ("q1", 3, "d2", 3.0, ""),
            ("q2", 1, "d4", 9.1, ""),
            ("q2", 2, "d2", 9.1, ""),
        ]

    def test_a_response_run_is_stored_as_its_segments(self, rubric_upload: Upload) -> None:
        response = rubric_upload("participant_b", "KYOTO-llm", rubric_run("KYOTO-llm"),
                                 track="gen")

        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["kind"], body["questions"], body["records"]) == ("response", 2, 3)
        assert passages(body["id"]) == [
            ("q1", 1, "KYOTO-llm:q1:1", None,
             "Ridley Scott directed Alien, released in 1979. He later directed Blade Runner."),
            ("q2", 1, "KYOTO-llm:q2:1",
             None, "Toy Story was the first fully computer-animated feature film."),
            ("q2", 2, "KYOTO-llm:q2:2", None, "Pixar made it; Disney released it."),
        ]

    def test_a_long_response_is_cut_at_sentences_into_passages_of_at_most_100_words(
        self, rubric_upload: Upload
    ) -> None:
        sentence = " ".join(["word"] * 29) + " end."  # 30 words
        text = " ".join([sentence] * 4)  # 120 words: 3 sentences fit, the 4th starts anew
        content = f'{{"qid": "q1", "text": "{text}"}}\n'.encode()
        response = rubric_upload("participant_a", "WASEDA-long", content, track="gen")

        assert response.status_code == 201, response.json()
        rows = passages(response.json()["id"])
        assert [(docid, len(text.split())) for _, _, docid, _, text in rows] == [
            ("WASEDA-long:q1:1", 90), ("WASEDA-long:q1:2", 30)]

    def test_uploading_a_ranking_run_again_replaces_it_and_keeps_the_old_version(
        self, rubric_upload: Upload
    ) -> None:
        first = rubric_upload("participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"),
                              track="dl").json()
        second = rubric_upload("participant_a", "WASEDA-bm25", b"q2 Q0 d2 0 1 bm25\n",
                               track="dl").json()

        old, new = Run.objects.get(pk=first["id"]), Run.objects.get(pk=second["id"])
        assert (old.is_current, new.is_current) == (False, True)
        assert len(passages(old.pk)) == 5 and passages(new.pk) == [("q2", 1, "d2", 1.0, "")]

    def test_passages_are_inserted_a_batch_at_a_time(
        self, rubric_upload: Upload, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # What keeps memory flat for a large run: never all its rows as ORM objects.
        monkeypatch.setattr(rubric_runs, "INSERT_BATCH", 2)
        with CaptureQueriesContext(connection) as queries:
            response = rubric_upload("participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"),
                                     track="dl")
        assert response.status_code == 201
        inserts = [query["sql"] for query in queries.captured_queries
                   if query["sql"].startswith('INSERT INTO "submissions_rankedpassage"')]
        assert len(inserts) == 3  # 5 rows: 2 + 2 + 1


class TestABadRunFile:
    def test_every_problem_of_a_ranking_run_is_named_with_its_line_and_nothing_is_stored(
        self, rubric_upload: Upload, media_in_tmp: Path
    ) -> None:
        content = (
            b"q1 Q0 d1 1 12.5 bm25\n"
            b"q1 Q0 d99 2 11.0 bm25\n"
            b"q1 Q0 d1 3 10.0 bm25\n"
            b"q2 Q0 d2 1 9.0 tfidf\n"
            b"q2 Q0 d4 2 high bm25\n"
            b"q9 Q0 d3 1 1.0 bm25\n"
        )
        response = rubric_upload("participant_a", "WASEDA-bm25", content, track="dl")

        assert response.status_code == 400
        body = response.json()
        assert body["detail"] == INVALID_RUN.format(name="WASEDA-bm25", count=5)
        assert [(e["line"], e["field"], e["message"]) for e in body["errors"]] == [
            (2, "docid", UNKNOWN_DOCID.format("d99")),
            (3, "docid", DUPLICATE_DOCID.format("d1", "q1", 1)),
            (4, "tag", TAG_CHANGED.format("tfidf", "bm25", 1)),
            (5, "score", BAD_SCORE.format("high")),
            (6, "qid", UNKNOWN_QUERY.format("q9")),
        ]
        run = Run.objects.get()
        assert (run.status, run.is_current, bool(run.file)) == (RunStatus.INVALID, False, False)
        assert run.validation_report == body["errors"] == body["run"]["validation_report"]
        assert not RankedPassage.objects.exists()
        assert stored_files(media_in_tmp) == []

    def test_every_problem_of_a_response_run_is_named_with_its_line_and_nothing_is_stored(
        self, rubric_upload: Upload, media_in_tmp: Path
    ) -> None:
        content = (
            b'{"qid": "q1", "text": "Ridley Scott."}\n'
            b'{"qid": "q1", "text": "Again."}\n'
            b'{"qid": "q9", "text": "Who?"}\n'
            b'{"qid": "q2", "text": "   "}\n'
            b'{"qid": "q2", "text": "unterminated\n'
        )
        response = rubric_upload("participant_a", "WASEDA-gen", content, track="gen")

        assert response.status_code == 400
        errors = response.json()["errors"]
        assert [(e["line"], e["field"]) for e in errors] == [
            (2, "qid"), (3, "qid"), (4, "text"), (5, "line")]
        assert errors[0]["message"] == DUPLICATE_RESPONSE.format("q1", 1)
        assert errors[1]["message"] == UNKNOWN_QUERY.format("q9")
        assert errors[2]["message"] == EMPTY_FIELD.format("text")
        assert errors[3]["message"].startswith("found text that is not JSON")
        assert Run.objects.get().status == RunStatus.INVALID
        assert not RankedPassage.objects.exists()
        assert stored_files(media_in_tmp) == []

    def test_a_segment_longer_than_a_passage_may_be_is_named_with_its_line(
        self, rubric_upload: Upload
    ) -> None:
        content = b'{"qid": "q1", "text": "Fine."}\n{"qid": "q2", "text": "%s"}\n' % (
            b"x" * 20_001)
        response = rubric_upload("participant_a", "WASEDA-gen", content, track="gen")

        assert response.status_code == 400
        assert response.json()["errors"] == [{"line": 2, "field": "text", "message":
                                              SEGMENT_TOO_LONG.format(chars=20_001, rank=1,
                                                                      limit=20_000)}]
        assert not RankedPassage.objects.exists()

    @pytest.mark.parametrize(("track", "name", "content", "line", "column"), [
        ("dl", "WASEDA-bm25", b"q1 Q0 d1 1 12.5 bm25\nq1 Q0 d2 2 1\x000 bm25\n", 2, 13),
        ("gen", "WASEDA-gen", b'{"qid": "q1", "text": "Nul\x00here."}\n', 1, 27),
    ])
    def test_a_nul_byte_is_a_line_level_problem_not_a_server_error(
        self, rubric_upload: Upload, track: str, name: str, content: bytes, line: int,
        column: int
    ) -> None:
        response = rubric_upload("participant_a", name, content, track=track)

        assert response.status_code == 400
        [error] = response.json()["errors"]
        assert error["line"] == line
        assert "U+0000" in error["message"]
        if track == "dl":
            assert error["message"] == CONTROL_CHARACTER.format(0, column, NO_CONTROLS_BUT_TAB)
        assert not RankedPassage.objects.exists()

    def test_a_nul_in_the_description_or_name_is_refused_with_its_field(
        self, rubric_upload: Upload
    ) -> None:
        content = rubric_run("WASEDA-bm25")
        description = rubric_upload("participant_a", "WASEDA-bm25", content, track="dl",
                                    description="BM25\x00")
        name = rubric_upload("participant_a", "WASEDA-bm\x0025", content, track="dl")

        assert (description.status_code, name.status_code) == (400, 400)
        assert [e["field"] for e in description.json()["errors"]] == ["description"]
        assert [e["field"] for e in name.json()["errors"]] == ["name"]
        assert not Run.objects.exists()


    def test_a_nul_in_the_uploaded_files_name_is_not_a_server_error(
        self, rubric: Personas
    ) -> None:
        response = rubric.client("participant_a").post(
            "/api/v1/campaigns/movie-rubric/runs/",
            {"track": "dl", "name": "WASEDA-bm25",
             "file": SimpleUploadedFile("bm25\x00.txt", rubric_run("WASEDA-bm25"))},
            format="multipart",
        )
        # Django's upload parsing drops the NUL; what is stored is a name PostgreSQL takes.
        assert response.status_code == 201, response.json()
        assert Run.objects.get().original_filename == "bm25.txt"


class TestWhatIsRefusedBeforeTheFileIsRead:
    @pytest.mark.parametrize("name", ["WASEDA-bm-25!", "WASEDA-" + "x" * 33, "WASEDA", "-bm25"])
    def test_a_name_that_is_not_team_dash_label_is_refused(
        self, rubric_upload: Upload, name: str
    ) -> None:
        response = rubric_upload("participant_a", name, rubric_run("WASEDA-bm25"), track="dl")

        assert response.status_code == 400
        assert response.json()["errors"] == [{"field": "name", "message": BAD_RUBRIC_RUN_NAME
                                              .format(name=name, kind="ranking", track="dl")}]
        assert not Run.objects.exists()

    def test_a_run_of_another_team_or_of_no_team_is_refused(self, rubric_upload: Upload) -> None:
        other = rubric_upload("participant_a", "KYOTO-bm25", rubric_run("WASEDA-bm25"), track="dl")
        nobody = rubric_upload("participant_a", "NTT-bm25", rubric_run("WASEDA-bm25"), track="dl")

        assert (other.status_code, nobody.status_code) == (403, 400)
        assert other.json()["detail"] == NOT_YOUR_TEAM.format(
            name="KYOTO-bm25", team="KYOTO", own="WASEDA")
        assert nobody.json()["detail"] == UNKNOWN_TEAM.format(
            name="NTT-bm25", team="NTT", campaign="movie-rubric")
        assert not Run.objects.exists()

    def test_the_tracks_own_deadline_is_enforced_whatever_the_campaigns_say(
        self, rubric: Personas, rubric_upload: Upload
    ) -> None:
        # The fixture set pr_due/ac_due in the past; dl is open, gen closes now.
        gen = Track.objects.get(slug="gen")
        gen.own_due = timezone.now() - timedelta(minutes=1)
        gen.save()

        open_track = rubric_upload("participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"),
                                   track="dl")
        closed = rubric_upload("participant_b", "KYOTO-llm", rubric_run("KYOTO-llm"), track="gen")

        assert open_track.status_code == 201
        assert closed.status_code == 403
        closed_at = DEADLINE_PASSED.split("; it is")[0]  # then the time of the request
        zone = rubric.campaign.timezone
        assert closed.json()["detail"].startswith(
            closed_at.format(track="gen", due=campaign_time(gen.own_due, zone), zone=zone))
        assert not Run.objects.filter(track=gen).exists()

    def test_an_organiser_may_enter_a_run_after_the_tracks_deadline(
        self, rubric: Personas, rubric_upload: Upload
    ) -> None:
        Track.objects.filter(slug="gen").update(own_due=timezone.now() - timedelta(days=1))
        response = rubric_upload("organiser", "KYOTO-llm", rubric_run("KYOTO-llm"), track="gen")
        assert response.status_code == 201
        assert (response.json()["team"], response.json()["uploaded_by"]) == ("KYOTO", "olga")

    def test_the_quota_counts_current_runs_and_a_replacement_is_not_a_new_run(
        self, rubric: Personas, rubric_upload: Upload
    ) -> None:
        Track.objects.filter(slug="dl").update(max_runs_per_team=2)
        run = rubric_run("WASEDA-bm25")
        statuses = [rubric_upload("participant_a", name, run, track="dl").status_code
                    for name in ("WASEDA-bm25", "WASEDA-dense", "WASEDA-bm25")]
        third = rubric_upload("participant_a", "WASEDA-rrf", run, track="dl")
        other_team = rubric_upload("participant_b", "KYOTO-bm25", run, track="dl")

        assert statuses == [201, 201, 201]
        assert third.status_code == 409
        assert third.json()["detail"] == TOO_MANY_RUNS.format(
            team="WASEDA", count=2, track="dl", names="WASEDA-bm25, WASEDA-dense", max_runs=2)
        assert other_team.status_code == 201
        assert not Run.objects.filter(name="WASEDA-rrf").exists()
