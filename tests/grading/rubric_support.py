"""A scripted RUBRIC judge and a small RUBRIC campaign, for the rubric grading tests.

`ScriptedRubric` answers the three RUBRIC prompts (grading/llm/prompts.py) as a test
says: the self-rating of a passage on an item (`rubric_grade` schema), the `llm`
answer-key check (`rubric_answer_key`) and the drafting of a test bank
(`rubric_testbank`). It tells them apart by their reply schema's name, reads the
inputs from the prompt's labelled sections, and counts the requests per kind.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.utils import timezone

from campaign.models import TestBankItem, Track
from campaign.testbank import testbank_add
from grading.llm.schemas import ANSWER_KEY_SCHEMA_NAME, RUBRIC_SCHEMA_NAME, TESTBANK_SCHEMA_NAME
from tests.factories import TrackFactory
from tests.grading.scripted_server import ChatRequest, Reply, Status, Step, Traffic
from tests.grading.scripted_server.replies import verdict_logprobs
from tests.support import Personas

GARBAGE = "this is not JSON {"


@dataclass(kw_only=True)
class ScriptedRubric(Traffic):
    """What the judge says.

    `grades` maps (passage, item) to (grade, answer); elsewhere (2, "scripted"). A
    pair in `garbage` is answered with text that never parses. `key_matches` maps an
    extracted answer to the `llm` check's verdict (else False), said with probability
    `key_sure`. `banks` maps a query text to the items drafted for it (a list of dicts
    as the schema has them), or to a Step (a fault) or GARBAGE.
    """

    grades: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    garbage: set[tuple[str, str]] = field(default_factory=set)
    key_matches: dict[str, bool] = field(default_factory=dict)
    key_sure: float = 0.99
    banks: dict[str, list[dict[str, Any]] | Step | str] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)  # schema name -> requests

    def __call__(self, request: ChatRequest) -> Step:
        name = request.schema_name
        with self.lock:
            self.calls[name] += 1
        if name == RUBRIC_SCHEMA_NAME:
            item_label = "QUESTION" if "QUESTION:" in request.user else "NUGGET"
            pair = (request.section("PASSAGE"), request.section(item_label))
            if pair in self.garbage:
                return Reply(GARBAGE)
            grade, answer = self.grades.get(pair, (2, "scripted"))
            return Reply(json.dumps({"grade": grade, "answer": answer}))
        if name == ANSWER_KEY_SCHEMA_NAME:
            verdict = self.key_matches.get(request.section("ANSWER"), False)
            return Reply(json.dumps(verdict), logprobs=verdict_logprobs(verdict, self.key_sure))
        if name == TESTBANK_SCHEMA_NAME:
            bank = self.banks.get(request.section("QUERY"), [{"text": "scripted?",
                                                              "answers": []}])
            if isinstance(bank, str):
                return Reply(bank)
            if isinstance(bank, list):
                return Reply(json.dumps({"items": bank}))
            return bank
        return Status(400, f"unexpected schema {name!r}")

    def count(self, name: str) -> int:
        with self.lock:
            return self.calls[name]


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
