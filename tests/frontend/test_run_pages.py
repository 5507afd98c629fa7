"""The run pages: upload with the validation report inline, lists, details, downloads."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from campaign.models import Track
from submissions.models import Run
from tests.support import Personas, example, set_clock, share_pr_runs, signed_in

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


# --- the Submit page and its links, by the tracks' deadlines ---------------------------

#: PR runs due 23:59 and AC runs 23:59 two weeks later (Tokyo), looked at weeks after
#: the PR deadline (18:13 in Tokyo); the questions out at 09:00 on 1 September.
TOPICS_RELEASE = datetime(2026, 9, 1, 0, 0, tzinfo=UTC)
PR_DUE = datetime(2026, 10, 1, 14, 59, 59, tzinfo=UTC)
AC_DUE = datetime(2026, 10, 15, 14, 59, 59, tzinfo=UTC)
BETWEEN = datetime(2026, 10, 8, 9, 13, 49, 405178, tzinfo=UTC)
AFTER_ALL = datetime(2026, 11, 28, 9, 13, 49, 405178, tzinfo=UTC)
UPLOAD = "/campaigns/toy/runs/upload/"
CLOSED = "Submissions are closed: every track&#x27;s deadline has passed."


@pytest.fixture
def at(personas: Personas, tracks: dict[str, Track],
       monkeypatch: pytest.MonkeyPatch) -> Callable[[datetime], None]:
    """The toy campaign's phases as above; `at(moment)`: the pages and the upload read
    `moment` as the time now."""
    campaign = personas.campaign
    campaign.topics_release, campaign.pr_due, campaign.ac_due = TOPICS_RELEASE, PR_DUE, AC_DUE
    campaign.results_release = AC_DUE + timedelta(days=30)
    campaign.save()
    return lambda moment: set_clock(monkeypatch, moment, "frontend.views",
                                    "submissions.services")


def track_options(html: str) -> list[str]:
    return re.findall(r'<option value="([^"]*)"', html)


def test_after_every_deadline_the_submit_page_says_closed_with_each_deadline(
    personas: Personas, at: Callable[[datetime], None]
) -> None:
    at(AFTER_ALL)
    client = signed_in(personas, "participant_a")
    page = client.get(UPLOAD)
    html = page.content.decode()
    assert page.status_code == 200
    assert CLOSED in html
    assert "Track ac: Answer with confidence (AC), runs due 2026-10-15 23:59 (Asia/Tokyo)" \
        in html
    assert "Track pr: Passage retrieval (PR), runs due 2026-10-01 23:59 (Asia/Tokyo)" in html
    assert 'enctype="multipart/form-data"' not in html and 'name="file"' not in html

    sent = post_run(client, "WASEDA-PO-1", example("WASEDA-PO-1"))
    assert sent.status_code == 403  # type: ignore[attr-defined]
    assert CLOSED in sent.content.decode()  # type: ignore[attr-defined]
    assert not Run.objects.exists()


def test_after_every_deadline_no_page_offers_a_participant_the_submit_link(
    personas: Personas, at: Callable[[datetime], None]
) -> None:
    at(AFTER_ALL)
    participant = signed_in(personas, "participant_a")
    for path in ("/campaigns/toy/", "/campaigns/toy/runs/", "/campaigns/toy/team/"):
        html = participant.get(path).content.decode()
        assert f'href="{UPLOAD}"' not in html, path
        assert CLOSED in html, path
    # Organisers may enter a run for a team at any time: their link and form stay.
    organiser = signed_in(personas, "organiser")
    assert f'href="{UPLOAD}"' in organiser.get("/campaigns/toy/").content.decode()
    assert track_options(organiser.get(UPLOAD).content.decode()) == ["ac", "pr"]


def test_with_some_tracks_closed_only_the_open_ones_are_offered(
    personas: Personas, at: Callable[[datetime], None]
) -> None:
    at(BETWEEN)
    client = signed_in(personas, "participant_a")
    html = client.get(UPLOAD).content.decode()
    assert track_options(html) == ["ac"]
    assert "ac: Answer with confidence (AC), due 2026-10-15 23:59 (Asia/Tokyo)" in html
    assert f'href="{UPLOAD}"' in client.get("/campaigns/toy/").content.decode()

    # A form loaded before the PR deadline and sent after it: refused in the server's words.
    late = post_run(client, "WASEDA-PO-1", example("WASEDA-PO-1"))
    assert late.status_code == 400  # type: ignore[attr-defined]
    assert ("track pr closed at 2026-10-01 23:59 (Asia/Tokyo); it is 2026-10-08 18:13 there "
            "now: uploads are refused") in late.content.decode()  # type: ignore[attr-defined]
    assert not Run.objects.exists()


def test_before_the_questions_the_submit_page_says_when_it_opens(
    personas: Personas, at: Callable[[datetime], None]
) -> None:
    at(TOPICS_RELEASE - timedelta(minutes=30))
    client = signed_in(personas, "participant_a")
    html = client.get(UPLOAD).content.decode()
    assert "Submissions open at 2026-09-01 09:00 (Asia/Tokyo), with the questions." in html
    assert 'name="file"' not in html
    assert f'href="{UPLOAD}"' not in client.get("/campaigns/toy/").content.decode()
