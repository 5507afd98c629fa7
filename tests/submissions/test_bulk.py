"""Bulk upload: a zip of run files, each validated on its own and reported on its own;
unsafe zips, and zips from outside the campaign, refused whole before anything is unpacked."""

from __future__ import annotations

import io
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DataError
from pytest_django import Settings as SettingsWrapper

from campaign.models import Track
from submissions import stores
from submissions.bulk import ZIP_DUPLICATE, ZIP_MEMBER_FAILED
from submissions.checks import NOT_A_MEMBER, NOT_YOUR_TEAM, TOO_MANY_RUNS_WITH_ZIP
from submissions.models import PassageRecord, Run, RunStatus
from tests.support import Personas, example, make_zip

pytestmark = pytest.mark.django_db


def post_zip(personas: Personas, who: str, content: bytes) -> Any:
    return personas.client(who).post(
        "/api/v1/campaigns/toy/runs/bulk/",
        {"file": SimpleUploadedFile("runs.zip", content)},
        format="multipart",
    )


def test_each_member_is_validated_and_stored_on_its_own(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    content = make_zip(
        {
            "WASEDA-PO-1": example("WASEDA-PO-1"),
            "KYOTO-PG-1": example("KYOTO-PG-1"),
            "KYOTO-PG-2": b"D001;0;Q1;Rank zero.\n",
            "notes.txt": b"hello",
        }
    )
    response = post_zip(personas, "organiser", content)

    assert response.status_code == 207
    results = {r["member"]: r for r in response.json()["results"]}
    assert response.json()["detail"] == "2 of 4 run file(s) stored"
    assert results["WASEDA-PO-1"]["status"] == 201
    assert results["KYOTO-PG-2"]["status"] == 400
    assert results["KYOTO-PG-2"]["errors"][0]["line"] == 1
    assert results["notes.txt"]["detail"].startswith("found run name 'notes.txt'")
    assert set(Run.objects.filter(status=RunStatus.VALID).values_list("name", flat=True)) == {
        "WASEDA-PO-1",
        "KYOTO-PG-1",
    }


def test_a_participant_cannot_slip_another_teams_run_into_a_zip(
    personas: Personas, tracks: dict[str, Track], media_in_tmp: Path
) -> None:
    content = make_zip({"WASEDA-PO-1": example("WASEDA-PO-1"), "KYOTO-PG-1": example("KYOTO-PG-1")})
    response = post_zip(personas, "participant_a", content)

    assert response.status_code == 207
    assert response.json()["detail"] == "1 of 2 run file(s) stored"
    results = {r["member"]: r for r in response.json()["results"]}
    assert {member: r["status"] for member, r in results.items()} == {
        "WASEDA-PO-1": 201,
        "KYOTO-PG-1": 403,
    }
    assert results["KYOTO-PG-1"]["detail"] == NOT_YOUR_TEAM.format(
        name="KYOTO-PG-1", team="KYOTO", own="WASEDA"
    )
    assert results["KYOTO-PG-1"]["run"] is None
    # Team A's own run is stored whole, as alice's; of team B's run nothing is stored:
    # no run row, no passages, no file.
    run = Run.objects.get()
    assert (run.name, run.team.name, run.uploaded_by, run.status, run.is_current) == (
        "WASEDA-PO-1", "WASEDA", personas.participant_a, RunStatus.VALID, True
    )
    assert results["WASEDA-PO-1"]["run"]["id"] == run.pk
    assert run.file.read() == example("WASEDA-PO-1")
    assert PassageRecord.objects.filter(run=run).count() == PassageRecord.objects.count() == 7
    assert [p.name for p in media_in_tmp.rglob("*") if p.is_file()] == [Path(run.file.name).name]


@pytest.mark.parametrize(
    ("members", "message"),
    [
        (
            {"../WASEDA-PO-1": b"x"},
            "member '../WASEDA-PO-1' has an unsafe path; expected plain run file names",
        ),
        (
            {"/etc/WASEDA-PO-1": b"x"},
            "member '/etc/WASEDA-PO-1' has an unsafe path; expected plain run file names",
        ),
        (
            {"runs/WASEDA-PO-1": b"x"},
            "member 'runs/WASEDA-PO-1' has an unsafe path; expected plain run file names",
        ),
        ({}, "the zip holds no run files"),
    ],
    ids=["parent folder", "absolute path", "sub folder", "empty"],
)
def test_an_unsafe_zip_is_refused_whole(
    personas: Personas, tracks: dict[str, Track], members: dict[str, bytes], message: str
) -> None:
    members = {"KYOTO-PG-1": example("KYOTO-PG-1"), **members} if members else members
    response = post_zip(personas, "organiser", make_zip(members))
    assert response.status_code == 400
    assert response.json()["detail"] == message
    assert Run.objects.count() == 0


def test_a_zip_with_too_many_members_is_refused(
    personas: Personas, tracks: dict[str, Track], settings: SettingsWrapper
) -> None:
    settings.RUN_ZIP_MAX_MEMBERS = 2
    content = make_zip({f"KYOTO-PG-{n}": b"D001;1;Q;T.\n" for n in (1, 2, 3)})
    response = post_zip(personas, "organiser", content)
    assert response.json()["detail"] == "the zip has 3 members; the limit is 2"
    assert Run.objects.count() == 0


def test_a_zip_bomb_is_refused_by_its_unpacked_size(
    personas: Personas, tracks: dict[str, Track], settings: SettingsWrapper
) -> None:
    settings.RUN_ZIP_MAX_UNPACKED_BYTES = 1_000_000
    content = make_zip({"KYOTO-PG-1": b"D001;1;Q;" + b"a" * 5_000_000 + b"\n"})
    assert len(content) < 20_000  # compresses well: only unpacking shows its size
    response = post_zip(personas, "organiser", content)
    assert response.status_code == 400
    assert response.json()["detail"] == ("the zip unpacks to 5000010 bytes; the limit is 1000000")
    assert Run.objects.count() == 0


def test_a_file_that_is_not_a_zip_is_refused(personas: Personas, tracks: dict[str, Track]) -> None:
    response = post_zip(personas, "organiser", b"not a zip")
    assert response.status_code == 400
    assert response.json()["detail"] == "the file is not a zip archive"


# --- checked before anything is unpacked or stored ----------------------------------------


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the zip members opened (unpacked, in part or whole), in order."""
    names: list[str] = []
    real_open = zipfile.ZipFile.open

    def open_member(archive: zipfile.ZipFile, name: Any, mode: Any = "r", *args: Any,
                    **kwargs: Any) -> Any:
        if mode == "r":  # writing a zip opens its members too
            names.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real_open(archive, name, mode, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", open_member)
    return names


def test_a_zip_from_outside_the_campaign_is_refused_before_any_member_is_unpacked(
    personas: Personas, tracks: dict[str, Track], opened: list[str]
) -> None:
    content = make_zip({"WASEDA-PO-1": example("WASEDA-PO-1"), "KYOTO-PG-1": example("KYOTO-PG-1")})
    response = post_zip(personas, "outsider", content)

    assert response.status_code == 403
    assert response.json()["detail"] == NOT_A_MEMBER.format(campaign="toy")
    assert opened == []
    assert Run.objects.count() == 0


def test_members_past_the_quota_counting_the_zips_own_runs_are_refused_unpacked(
    personas: Personas, tracks: dict[str, Track], opened: list[str]
) -> None:
    Track.objects.filter(slug="pr").update(max_runs_per_team=2)
    names = ["WASEDA-PO-1", "WASEDA-PG-1", "WASEDA-PO-2", "WASEDA-PG-2"]
    content = make_zip({name: example("WASEDA-PO-1") for name in names})

    response = post_zip(personas, "participant_a", content)

    assert response.status_code == 207
    results = {r["member"]: r for r in response.json()["results"]}
    assert [results[name]["status"] for name in names] == [201, 201, 409, 409]
    assert results["WASEDA-PO-2"]["detail"] == TOO_MANY_RUNS_WITH_ZIP.format(
        team="WASEDA", count=3, track="pr", name="WASEDA-PO-2",
        names="WASEDA-PG-1, WASEDA-PO-1", max_runs=2)
    # The refused members were never unpacked; the others were read through once for
    # their real size, then unpacked to be stored.
    assert "WASEDA-PO-2" not in opened and "WASEDA-PG-2" not in opened
    assert sorted(Run.objects.values_list("name", flat=True)) == ["WASEDA-PG-1", "WASEDA-PO-1"]


def test_a_failure_while_storing_one_member_is_reported_for_it_and_the_others_stand(
    personas: Personas, tracks: dict[str, Track], media_in_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_store = stores.pr_run

    def failing_store(storing: stores.Storing) -> Any:
        if storing.run.name == "KYOTO-PG-1":  # e.g. the database refuses a value mid-way
            raise DataError("value too long for type character varying(200)")
        return real_store(storing)

    monkeypatch.setattr(stores, "pr_run", failing_store)
    content = make_zip({"KYOTO-PG-1": example("KYOTO-PG-1"), "WASEDA-PO-1": example("WASEDA-PO-1")})

    response = post_zip(personas, "organiser", content)

    assert response.status_code == 207
    results = {r["member"]: r for r in response.json()["results"]}
    assert results["KYOTO-PG-1"]["status"] == 500
    assert results["KYOTO-PG-1"]["detail"] == ZIP_MEMBER_FAILED.format(
        member="KYOTO-PG-1", reason="DataError")
    assert results["WASEDA-PO-1"]["status"] == 201
    # Nothing of the failed member: no run row, no records, no file.
    run = Run.objects.get()
    assert run.name == "WASEDA-PO-1"
    assert PassageRecord.objects.count() == 7
    assert [p.name for p in media_in_tmp.rglob("*") if p.is_file()] == [Path(run.file.name).name]


def test_a_zip_that_names_a_run_twice_is_refused_whole(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns of the duplicate
        archive.writestr("WASEDA-PO-1", example("WASEDA-PO-1"))
        archive.writestr("WASEDA-PO-1", b"D001;1;d;another version\n")

    response = post_zip(personas, "organiser", buffer.getvalue())

    assert response.status_code == 400
    assert response.json()["detail"] == ZIP_DUPLICATE.format(members="'WASEDA-PO-1'")
    assert Run.objects.count() == 0
