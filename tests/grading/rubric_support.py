"""A small RUBRIC campaign for the rubric grading tests, and the scripted RUBRIC judge
(`ScriptedRubric`, tests/grading/scripted_server/rubric.py) that grades it."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from campaign.models import TestBankItem, Track
from campaign.testbank import testbank_add
from tests.factories import TrackFactory
from tests.grading.scripted_server.rubric import GARBAGE, ScriptedRubric
from tests.support import Personas

__all__ = ["GARBAGE", "ScriptedRubric", "make_bank", "rubric_track"]

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
