"""The run pages: upload with the validation report inline, lists, details, downloads."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from campaign.models import Track
from submissions.models import Run
from tests.support import Personas, example, share_pr_runs, signed_in

pytestmark = pytest.mark.django_db


def post_run(client: Client, name: str, content: bytes, track: str = "pr") -> object:
    return client.post("/campaigns/toy/runs/upload/", {
        "track": track, "name": name, "description": "",
        "file": SimpleUploadedFile(name, content),
    })


def test_the_upload_page_has_a_labelled_form(personas: Personas,
                                             tracks: dict[str, Track]) -> None:
    page = signed_in(personas, "participant_a").get("/campaigns/toy/runs/upload/")
    html = page.content.decode()
    assert page.status_code == 200
    for field in ("track", "name", "file", "description"):
        assert f'<label for="id_{field}">' in html


def test_a_bad_run_shows_every_problem_inline(personas: Personas,
                                              tracks: dict[str, Track]) -> None:
    client = signed_in(personas, "participant_a")
    content = b"D001;1;Q1;Fine.\nD001;x;Q2;Bad rank.\nD009;2;Q;Who?\n"
    response = post_run(client, "WASEDA-PO-1", content)
    html = response.content.decode()  # type: ignore[attr-defined]
    assert response.status_code == 400  # type: ignore[attr-defined]
    assert 'role="alert"' in html
    assert "WASEDA-PO-1 was not accepted: 2 problem(s) in the file; nothing was stored" in html
    assert "<td>2</td><td>PassageRank</td>" in html
    assert "<td>3</td><td>qID</td>" in html


def test_a_good_run_leads_to_its_page(personas: Personas, tracks: dict[str, Track]) -> None:
    client = signed_in(personas, "participant_a")
    response = post_run(client, "WASEDA-PO-1", example("WASEDA-PO-1"))
    run = Run.objects.get(name="WASEDA-PO-1")
    assert response.status_code == 302  # type: ignore[attr-defined]
    assert response["Location"] == f"/runs/{run.pk}/"  # type: ignore[index]
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "3 questions, 7 passages" in page and run.sha256 in page


def test_a_refused_upload_says_why(personas: Personas, tracks: dict[str, Track]) -> None:
    client = signed_in(personas, "participant_a")
    response = post_run(client, "KYOTO-PG-1", example("KYOTO-PG-1"))
    assert "Upload refused:" in response.content.decode()  # type: ignore[attr-defined]
    assert "you may submit runs for team WASEDA only" in response.content.decode()  # type: ignore[attr-defined]


def test_anonymous_visitors_are_sent_to_sign_in(personas: Personas) -> None:
    response = Client().get("/campaigns/toy/runs/upload/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/campaigns/toy/runs/upload/"


def test_another_teams_run_page_is_not_found_until_shared(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    post_run(signed_in(personas, "participant_b"), "KYOTO-PG-1", example("KYOTO-PG-1"))
    run = Run.objects.get(name="KYOTO-PG-1")
    client = signed_in(personas, "participant_a")
    assert client.get(f"/runs/{run.pk}/").status_code == 404
    assert client.get(f"/runs/{run.pk}/download/").status_code == 404
    assert "KYOTO-PG-1" not in client.get("/campaigns/toy/runs/").content.decode()
    share_pr_runs(personas)
    assert client.get(f"/runs/{run.pk}/download/").status_code == 200
    assert "KYOTO-PG-1" in client.get("/campaigns/toy/runs/").content.decode()


def test_the_login_page_signs_a_participant_in(personas: Personas) -> None:
    client = Client()
    response = client.post("/accounts/login/", {"username": "alice",
                                                "password": "secret-pass-123"})
    assert response.status_code == 302
    assert "Signed in as alice" in client.get("/").content.decode()


def test_the_team_page_lists_members_and_every_version_of_the_teams_runs(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    client = signed_in(personas, "participant_a")
    post_run(client, "WASEDA-PO-1", example("WASEDA-PO-1"))
    post_run(client, "WASEDA-PO-1", b"bad\n")
    page = client.get("/campaigns/toy/team/").content.decode()
    assert "Team WASEDA" in page and "alice" in page
    assert page.count(">WASEDA-PO-1</a>") == 2 and "rejected" in page
    assert signed_in(personas, "outsider").get("/campaigns/toy/team/").status_code == 404
