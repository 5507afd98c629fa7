"""Bulk upload: a zip of run files, each validated on its own; unsafe zips refused whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings as SettingsWrapper

from campaign.models import Track
from submissions.models import PassageRecord, Run, RunStatus
from submissions.services import NOT_YOUR_TEAM
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
