"""Submitting runs through the REST API: stored whole or not at all, every rule named."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from pytest_django import Settings as SettingsWrapper

from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run, RunStatus
from tests.support import Personas, Upload, example, set_clock, share_pr_runs

pytestmark = pytest.mark.django_db


#: The reported case: PR runs due at 23:59:59 in Tokyo, a PR run uploaded weeks later
#: (18:13:49.405178 in Tokyo); AC runs due two weeks after PR runs.
TOPICS_RELEASE = datetime(2026, 9, 1, 0, 0, tzinfo=UTC)
PR_DUE = datetime(2026, 10, 1, 14, 59, 59, tzinfo=UTC)
AC_DUE = datetime(2026, 12, 15, 14, 59, 59, tzinfo=UTC)
REPORTED_UPLOAD = datetime(2026, 11, 28, 9, 13, 49, 405178, tzinfo=UTC)

Clock = Callable[[datetime], None]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """`clock(moment)`: the upload API and the service read `moment` as the time now."""
    return lambda moment: set_clock(monkeypatch, moment, "submissions.api",
                                    "submissions.services")


def set_phases(personas: Personas, *, ac_due: datetime = AC_DUE) -> None:
    campaign = personas.campaign
    campaign.topics_release, campaign.pr_due, campaign.ac_due = TOPICS_RELEASE, PR_DUE, ac_due
    campaign.results_release = ac_due + timedelta(days=30)
    campaign.save()


def stored_files(media: Path) -> list[str]:
    return sorted(p.name for p in media.rglob("*") if p.is_file())


class TestAValidRun:
    def test_a_participant_submits_a_pr_run_and_it_is_stored_with_its_records(
        self, upload: Upload, media_in_tmp: Path
    ) -> None:
        content = example("WASEDA-PO-1")
        response = upload("participant_a", "WASEDA-PO-1", content, description="BM25")

        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["status"] == "valid" and body["is_current"] is True
        assert body["sha256"] == hashlib.sha256(content).hexdigest()
        assert (body["size"], body["questions"], body["records"]) == (len(content), 3, 7)
        assert body["uploaded_by"] == "alice" and body["description"] == "BM25"
        run = Run.objects.get(pk=body["id"])
        assert run.file.read() == content
        # tests/data/toy/WASEDA-PO-1, line 6: the passage text holds a ';', kept whole.
        first = PassageRecord.objects.get(run=run, qid="D003", rank=1)
        assert (first.doc_id, first.text) == (
            "mars",
            "Mars is the fourth planet from the Sun; its mean diameter is about 6,779 km, "
            "roughly half that of Earth.",
        )

    def test_an_ac_run_may_cite_its_own_teams_pr_run_before_sharing(self, upload: Upload) -> None:
        upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        content = (
            b"<D002>\nBuzz Aldrin;85\n1;WASEDA-PO-1;2;Buzz Aldrin walked on the Moon.\n</D002>\n"
        )
        response = upload("participant_a", "WASEDA-AC-1", content)
        assert response.status_code == 201, response.json()
        nugget = NuggetRecord.objects.get()
        assert (nugget.qid, nugget.pr_run_name, nugget.passage_rank) == ("D002", "WASEDA-PO-1", 2)
        assert AnswerRecord.objects.get().confidence == 85

    def test_the_toy_ac_run_is_accepted_once_the_pr_runs_it_cites_are_shared(
        self, upload: Upload, personas: Personas
    ) -> None:
        upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
        share_pr_runs(personas)

        response = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1"))

        assert response.status_code == 201, response.json()
        # tests/data/toy/WASEDA-AC-1: 3 + 2 + 3 nuggets, two of them (D002 nugget 2 and
        # D003 nugget 2) citing team B's KYOTO-PG-1 rank 1.
        assert (response.json()["questions"], response.json()["records"]) == (3, 8)
        cited = NuggetRecord.objects.filter(pr_run_name="KYOTO-PG-1")
        assert sorted(cited.values_list("qid", "nugget_num", "passage_rank")) == [
            ("D002", 2, 1),
            ("D003", 2, 1),
        ]

    def test_uploading_a_run_again_replaces_it_and_keeps_the_old_version(
        self, upload: Upload
    ) -> None:
        first = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1")).json()
        second = upload("participant_a", "WASEDA-PO-1", b"D001;1;Q1;A single passage.\n").json()

        old, new = Run.objects.get(pk=first["id"]), Run.objects.get(pk=second["id"])
        assert (old.is_current, new.is_current) == (False, True)
        assert old.replaced_at is not None and old.file.read() == example("WASEDA-PO-1")
        assert PassageRecord.objects.filter(run=new).count() == 1

    def test_an_organiser_may_enter_a_run_for_any_team_after_the_deadline(
        self, upload: Upload, personas: Personas
    ) -> None:
        personas.campaign.pr_due = timezone.now() - timedelta(hours=1)
        personas.campaign.save()
        response = upload("organiser", "KYOTO-PG-1", example("KYOTO-PG-1"))
        assert response.status_code == 201
        assert response.json()["team"] == "KYOTO" and response.json()["uploaded_by"] == "olga"


class TestAnInvalidRun:
    def test_every_problem_is_reported_and_nothing_of_the_file_is_stored(
        self, upload: Upload, media_in_tmp: Path
    ) -> None:
        content = (
            b"D001;1;Q1;Fine passage.\n"
            b"D001;1;Q2;Same rank again.\n"
            b"D009;2;Q3;Unknown question.\n"
            b"D002;21;Q4;Rank too high.\n"
        )
        response = upload("participant_a", "WASEDA-PO-1", content)

        assert response.status_code == 400
        body = response.json()
        assert (
            body["detail"] == "WASEDA-PO-1 was not accepted: 3 problem(s) in the file; "
            "nothing was stored"
        )
        assert [(e["line"], e["field"]) for e in body["errors"]] == [
            (2, "PassageRank"),
            (3, "qID"),
            (4, "PassageRank"),
        ]
        assert all(e["message"].startswith("found ") for e in body["errors"])
        assert PassageRecord.objects.count() == 0
        assert stored_files(media_in_tmp) == []
        run = Run.objects.get()
        assert (run.status, run.is_current, bool(run.file)) == (RunStatus.INVALID, False, False)
        assert run.validation_report == body["errors"]

    def test_an_invalid_upload_does_not_replace_the_current_version(self, upload: Upload) -> None:
        good = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1")).json()
        upload("participant_a", "WASEDA-PO-1", b"garbage\n")
        assert Run.objects.get(is_current=True).pk == good["id"]

    def test_an_ac_run_citing_an_unshared_pr_run_is_invalid(self, upload: Upload) -> None:
        upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
        content = (
            b"<D003>\nMars;95\n1;KYOTO-PG-1;1;Mercury is about 4,879 km across.\n</D003>\n"
        )
        response = upload("participant_a", "WASEDA-AC-1", content)
        assert response.status_code == 400
        [error] = response.json()["errors"]
        assert (error["line"], error["field"]) == (3, "PRrunname")
        assert error["message"].startswith("found PRrunname 'KYOTO-PG-1', which is not a shared")

    def test_a_failure_while_storing_leaves_no_records_and_no_file(
        self, upload: Upload, media_in_tmp: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        real_save = Run.save

        def save_failing_at_the_end(run: Run, *args: object, **kwargs: object) -> None:
            # The last save, after the records and the file were written.
            if run.status == RunStatus.VALID:
                raise OSError("database went away")
            real_save(run, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(Run, "save", save_failing_at_the_end)
        with pytest.raises(OSError):
            upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        monkeypatch.undo()
        assert Run.objects.count() == 0 and PassageRecord.objects.count() == 0
        assert stored_files(media_in_tmp) == []


class TestUploadRules:
    @pytest.mark.parametrize(
        ("who", "name", "track", "status", "message"),
        [
            (
                "participant_a",
                "WASEDA-XX-1",
                "pr",
                400,
                "found run name 'WASEDA-XX-1'; expected [Team]-PG-[n] or [Team]-PO-[n] for a PR "
                "run, [Team]-AC-[n] for an AC run",
            ),
            (
                "participant_a",
                "WASEDA-AC-1",
                "pr",
                400,
                "run WASEDA-AC-1 is an AC run; expected a name for the pr track ([Team]-PG-[n] or "
                "[Team]-PO-[n])",
            ),
            (
                "participant_a",
                "WASEDA-PG-5",
                "pr",
                400,
                "run WASEDA-PG-5 has number 5; expected 1 to 4 in track pr",
            ),
            (
                "participant_a",
                "NOSUCH-PG-1",
                "pr",
                400,
                "run NOSUCH-PG-1 names team NOSUCH, which is not a team of campaign toy",
            ),
            (
                "participant_a",
                "KYOTO-PG-1",
                "pr",
                403,
                "run KYOTO-PG-1 belongs to team KYOTO; you may submit runs for team WASEDA only",
            ),
            (
                "outsider",
                "WASEDA-PG-1",
                "pr",
                403,
                "you are not a participant or organiser of campaign toy",
            ),
            (
                "anonymous",
                "WASEDA-PG-1",
                "pr",
                401,
                "Authentication credentials were not provided.",
            ),
            (
                "participant_a",
                "WASEDA-PG-1",
                "qa",
                400,
                "campaign toy has no track 'qa'; expected one of: ac, pr",
            ),
        ],
    )
    def test_an_upload_breaking_a_rule_is_refused_and_leaves_nothing(
        self, upload: Upload, who: str, name: str, track: str, status: int, message: str
    ) -> None:
        response = upload(who, name, example("WASEDA-PO-1"), track=track)
        assert response.status_code == status
        assert response.json()["detail"] == message
        assert Run.objects.count() == 0

    def test_it_refuses_a_run_before_the_questions_are_released(
        self, upload: Upload, personas: Personas, clock: Clock
    ) -> None:
        set_phases(personas)
        clock(TOPICS_RELEASE - timedelta(minutes=30))
        response = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        assert response.status_code == 403
        # Every track opens with the questions: refused for the campaign, before the file.
        assert response.json()["detail"] == (
            "campaign toy takes runs from 2026-09-01 09:00 (Asia/Tokyo, with the questions); "
            "it is 2026-09-01 08:30 there now")
        assert Run.objects.count() == 0

    def test_it_rejects_a_late_run_saying_when_in_the_campaigns_zone_to_the_minute(
        self, upload: Upload, personas: Personas, clock: Clock
    ) -> None:
        set_phases(personas)
        clock(REPORTED_UPLOAD)  # the AC track is still open: the PR track's own refusal
        response = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        assert response.status_code == 403
        assert response.json()["detail"] == (
            "track pr closed at 2026-10-01 23:59 (Asia/Tokyo); it is 2026-11-28 18:13 there "
            "now: uploads are refused")
        assert Run.objects.count() == 0

    def test_a_run_is_taken_up_to_the_deadline_itself(
        self, upload: Upload, personas: Personas, clock: Clock
    ) -> None:
        set_phases(personas)
        clock(PR_DUE)
        response = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        assert response.status_code == 201, response.json()

    def test_it_refuses_a_file_over_the_size_limit(
        self, upload: Upload, settings: SettingsWrapper
    ) -> None:
        settings.RUN_MAX_BYTES = 100
        response = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
        assert response.status_code == 413
        assert response.json()["detail"] == (
            f"the file is {len(example('WASEDA-PO-1'))} bytes; the limit is 100 bytes"
        )

    def test_it_refuses_a_fifth_run_in_a_track(self, upload: Upload) -> None:
        for name in ("WASEDA-PG-1", "WASEDA-PG-2", "WASEDA-PO-1", "WASEDA-PO-2"):
            assert upload("participant_a", name, b"D001;1;Q1;Text.\n").status_code == 201
        response = upload("participant_a", "WASEDA-PO-3", b"D001;1;Q1;Text.\n")
        assert response.status_code == 409
        assert response.json()["detail"] == (
            "team WASEDA already has 4 runs in track pr (WASEDA-PG-1, WASEDA-PG-2, WASEDA-PO-1,"
            " WASEDA-PO-2); the limit is 4: replace one by uploading it again under its name"
        )
        assert upload("participant_a", "WASEDA-PO-2", b"D002;1;Q1;Text.\n").status_code == 201

    def test_missing_form_fields_are_each_named(self, personas: Personas, tracks: object) -> None:
        response = personas.client("participant_a").post(
            "/api/v1/campaigns/toy/runs/", {}, format="multipart"
        )
        assert response.status_code == 400
        assert {e["field"] for e in response.json()["errors"]} == {"track", "name", "file"}


class TestRefusedBeforeTheFileIsRead:
    """Who may not upload at all now is refused before the request's body is parsed: a
    body that is no multipart form at all shows it (parsed, it would be a 400)."""

    NOT_A_FORM = "this is no multipart form: reading it would be a 400"

    def post_unreadable(self, personas: Personas, who: str) -> Any:
        return personas.client(who).generic(
            "POST", "/api/v1/campaigns/toy/runs/", self.NOT_A_FORM,
            content_type="multipart/form-data; boundary=nowhere")

    def test_every_track_closed_is_refused_naming_each_deadline(
        self, personas: Personas, tracks: dict[str, Any], clock: Clock
    ) -> None:
        set_phases(personas, ac_due=datetime(2026, 10, 15, 14, 59, 59, tzinfo=UTC))
        clock(REPORTED_UPLOAD)
        response = self.post_unreadable(personas, "participant_a")
        assert response.status_code == 403
        assert response.json()["detail"] == (
            "every track of campaign toy is closed: ac at 2026-10-15 23:59, pr at "
            "2026-10-01 23:59 (Asia/Tokyo); it is 2026-11-28 18:13 there now: uploads are "
            "refused")

    def test_a_campaign_with_one_closed_track_says_the_tracks_own_refusal(
        self, personas: Personas, tracks: dict[str, Any], clock: Clock
    ) -> None:
        set_phases(personas)
        tracks["ac"].delete()
        clock(REPORTED_UPLOAD)
        response = self.post_unreadable(personas, "participant_b")
        assert response.status_code == 403
        assert response.json()["detail"] == (
            "track pr closed at 2026-10-01 23:59 (Asia/Tokyo); it is 2026-11-28 18:13 there "
            "now: uploads are refused")

    def test_someone_with_no_part_in_the_campaign_is_refused(
        self, personas: Personas, tracks: dict[str, Any]
    ) -> None:
        response = self.post_unreadable(personas, "outsider")
        assert response.status_code == 403
        assert response.json()["detail"] == "you are not a participant or organiser of campaign toy"

    def test_with_a_track_open_the_body_is_read_and_an_organiser_may_always_upload(
        self, personas: Personas, tracks: dict[str, Any], upload: Upload, clock: Clock
    ) -> None:
        set_phases(personas)
        clock(REPORTED_UPLOAD)  # AC open: the body is read, and found no form
        assert self.post_unreadable(personas, "participant_a").status_code == 400
        clock(AC_DUE + timedelta(days=1))  # all closed, but not to the organisers
        assert self.post_unreadable(personas, "organiser").status_code == 400
        entered = upload("organiser", "WASEDA-PO-1", example("WASEDA-PO-1"))
        assert entered.status_code == 201, entered.json()
