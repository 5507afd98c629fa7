"""`ScriptedRubric`: a responder that answers the RUBRIC judge's prompts as a test says.

It answers the three RUBRIC prompts (grading/llm/prompts.py): the self-rating of a
passage on an item (`rubric_grade` schema), the `llm` answer-key check
(`rubric_answer_key`) and the drafting of a test bank (`rubric_testbank`). It tells them
apart by their reply schema's name, reads the inputs from the prompt's labelled
sections, and counts the requests per kind. `ScriptedJudge` hands it the RUBRIC
requests it is given, so one server (the session's, the worker's judge) answers both
kinds of campaign.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from grading.llm.schemas import ANSWER_KEY_SCHEMA_NAME, RUBRIC_SCHEMA_NAME, TESTBANK_SCHEMA_NAME
from tests.grading.scripted_server.replies import (
    ChatRequest,
    Reply,
    Status,
    Step,
    verdict_logprobs,
)
from tests.grading.scripted_server.server import Traffic

#: The schemas of the RUBRIC prompts, which `ScriptedRubric` answers.
RUBRIC_SCHEMAS = frozenset({RUBRIC_SCHEMA_NAME, ANSWER_KEY_SCHEMA_NAME, TESTBANK_SCHEMA_NAME})

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
