"""Small RUBRIC campaigns for the rubric tests, and the scripted RUBRIC judge
(`ScriptedRubric`, tests/grading/scripted_server/rubric.py) that grades them: a test
bank on the toy campaign (`make_bank`), and tests/data/rubric loaded from its YAML as
organisers load it (`movie_rubric`), with runs submitted through the API (`submit`) and
graded by the `grade` command (`grade`)."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from campaign.models import Campaign, TestBankItem, Track
from campaign.testbank import testbank_add
from submissions.models import Run
from tests.factories import TrackFactory, UserFactory
from tests.grading.scripted_server import ScriptedServer
from tests.grading.scripted_server.rubric import GARBAGE, ScriptedRubric
from tests.support import REPO, Personas

__all__ = ["GARBAGE", "MODEL", "RUBRIC", "RUBRIC_RUNS", "SLUG", "ScriptedRubric", "grade",
           "make_bank", "movie_rubric", "rubric_run", "rubric_track", "submit"]

RUBRIC = REPO / "tests" / "data" / "rubric"
RUBRIC_RUNS = RUBRIC / "runs"
SLUG = "movie-rubric"  # tests/data/rubric/campaign.yaml
MODEL = "scripted-judge"


def rubric_run(name: str) -> bytes:
    """A run file of the tiny RUBRIC campaign (tests/data/rubric/runs)."""
    return (RUBRIC_RUNS / name).read_bytes()


def movie_rubric() -> Personas:
    """tests/data/rubric/campaign.yaml, loaded as organisers load it, its tracks open."""
    call_command("load_campaign", str(RUBRIC / "campaign.yaml"), stdout=io.StringIO())
    campaign = Campaign.objects.get(slug=SLUG)
    Track.objects.filter(campaign=campaign).update(own_due=timezone.now() + timedelta(days=7))
    return Personas(
        campaign=campaign,
        organiser=campaign.memberships.get(user__username="olga").user,
        participant_a=campaign.memberships.get(user__username="alice").user,  # WASEDA
        participant_b=campaign.memberships.get(user__username="bob").user,  # KYOTO
        outsider=UserFactory.create(username="oscar"),
    )


def submit(personas: Personas, who: str, name: str, track: str,
           content: bytes | None = None) -> Run:
    """Upload a run through the API (tests/data/rubric/runs/NAME unless `content`)."""
    response = personas.client(who).post(
        f"/api/v1/campaigns/{SLUG}/runs/",
        {"track": track, "name": name,
         "file": SimpleUploadedFile(name, content or rubric_run(name))}, format="multipart")
    assert response.status_code == 201, response.json()
    return Run.objects.select_related("track__campaign").get(pk=response.json()["id"])


def grade(server: ScriptedServer[Any], *options: str) -> str:
    """`manage.py grade movie-rubric` with the scripted judge `server`; its output."""
    stdout = io.StringIO()
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL=MODEL,
                           GRADER_TIMEOUT=30):
        call_command("grade", SLUG, *options, stdout=stdout, stderr=io.StringIO())
    return stdout.getvalue()

def rubric_track(personas: Personas, *, answer_check: str = "none") -> Track:
    """A ranking track on the toy campaign (questions D001..D003)."""
    return TrackFactory.create(campaign=personas.campaign, slug="dl", kind="ranking",
                               answer_check=answer_check,
                               own_due=timezone.now() + timedelta(days=30))


def make_bank(personas: Personas) -> dict[str, TestBankItem]:
    """Two questions for D001 (with answer keys), one nugget for D002; D003 has none."""
    campaign = personas.campaign
    return {
        "director": testbank_add(campaign=campaign, user=None, qid="D001",
                                 target="questions", text="Who directed Alien?",
                                 answers=["Ridley Scott"]),
        "year": testbank_add(campaign=campaign, user=None, qid="D001", target="questions",
                             text="When was Alien released?", answers=["1979"]),
        "cgi": testbank_add(campaign=campaign, user=None, qid="D002", target="nuggets",
                            text="Toy Story was the first computer-animated feature."),
    }


ALIEN = "Alien (1979) was directed by Ridley Scott."
BLADE = "Ridley Scott later directed Blade Runner."
SHARK = "Jaws (1975) was directed by Steven Spielberg."
TOY = "Toy Story (1995) was the first feature made entirely with computer animation."

#: (qid, docid, text): what runs retrieved, before de-duplication.
PASSAGES = [("D001", "d1", ALIEN), ("D001", "d3", BLADE), ("D001", "d4", SHARK),
            ("D002", "d2", TOY), ("D003", "d9", SHARK)]
