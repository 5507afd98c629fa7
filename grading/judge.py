"""The seam between the grading pipeline and an LLM judge: the inputs it judges, the outcome
of each, the judge's identity and the protocol every judge follows (docs/judging.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from campaign.vocabulary import RubricAnswerCheck
from grading.llm.calls import JudgeError
from grading.llm.inputs import DecodingParams
from grading.llm.prompts import ANSWER_KEY_PROMPT_VERSION, RUBRIC_PROMPT_VERSION
from grading.llm.subtasks import (
    ANSWER_V2,
    ENTAILMENT_V2,
    SUBTASKS,
    Subtask,
)
from grading.r2c2.entailment_rule import RULE_VERSION
from grading.r2c2.gold_match import GOLD_RULE_VERSION


@dataclass(frozen=True)
class EntailmentInput:
    """Step 1: does the passage at the PassageKey entail the nugget?"""

    passage: str
    nugget: str

    prompt_version = ENTAILMENT_V2

    def as_json(self) -> dict[str, Any]:
        return {"passage": self.passage, "nugget": self.nugget}


@dataclass(frozen=True)
class AnswerInput:
    """Step 2: is the answer correct given the entailed nuggets, and which helped?"""

    question: str
    answer: str
    nuggets: tuple[tuple[int, str], ...]  # (NuggetNum, text) of the entailed nuggets
    answer_check: str = "nuggets"
    gold_answers: tuple[str, ...] = ()

    prompt_version = ANSWER_V2

    def as_json(self) -> dict[str, Any]:
        return {
            "question": self.question, "answer": self.answer,
            "nuggets": [{"num": num, "text": text} for num, text in self.nuggets],
            "answer_check": self.answer_check, "gold_answers": list(self.gold_answers),
        }


@dataclass(frozen=True)
class RubricInput:
    """How well does the passage answer (or state) one test-bank item, on 0..5? `answers` count
    only under a key or llm check: without one, a changed key re-grades nothing."""

    passage: str
    item: str
    item_text_hash: str
    target: str
    answer_check: str = RubricAnswerCheck.NONE
    answers: tuple[str, ...] = ()

    prompt_version = RUBRIC_PROMPT_VERSION

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "passage": self.passage, "item": self.item, "item_text_hash": self.item_text_hash,
            "target": self.target, "answer_check": str(self.answer_check),
        }
        if self.answer_check != RubricAnswerCheck.NONE:
            data["answers"] = list(self.answers)
        if self.answer_check == RubricAnswerCheck.LLM:
            # The second prompt's wording decides key_match: part of the input too.
            data["answer_key_prompt_version"] = ANSWER_KEY_PROMPT_VERSION
        return data


JudgeInput = EntailmentInput | AnswerInput | RubricInput
UNANSWERABLE_REASON = "The extracted answer says the passage gives none (grade 0)."
KEY_CHECK_UNPARSED = ("The answer-key check's reply never parsed, so whether the answer "
                      "matches the key is unknown.")


@dataclass(frozen=True)
class JudgeOutcome:
    """One judgment as stored: the label (None when the reply never parsed), provenance."""

    label: dict[str, Any] | None
    reason: str
    nugget_reasons: dict[str, str]
    raw_output: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_seconds: float
    attempts: int
    needs_review: bool
    error: str = ""
    # The judge's probability for its label: the least sure step's (None: not measured).
    confidence: float | None = None
    # The same through the judge's calibration: the share of such labels people agree
    # with (None: no calibration fitted for one of its steps).
    calibrated_confidence: float | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class JudgeIdentity:
    """Who judges: the model and decoding parameters (part of every cache key)."""

    model: str
    decoding: DecodingParams

    def input_hash(self, item: JudgeInput) -> str:
        """sha256 of everything that determines the judgment of `item` by this judge, the subtasks'
        wordings and thresholds included (docs/judging.md, "Prompts and versions")."""
        payload = {
            "prompt_version": item.prompt_version,
            "model": self.model, "decoding": self.decoding.as_dict(),
            "input": item.as_json(),
        }
        if not isinstance(item, RubricInput):
            # The subtasks that decide the input (a rubric input's are none of theirs):
            # a reworded or re-thresholded one re-judges only the inputs it decides.
            used: tuple[Subtask, ...] = ("entailment",) if isinstance(
                item, EntailmentInput) else ("gold", "nuggets", "relevance")
            payload["subtasks"] = {name: SUBTASKS[name].decision for name in used}
        if isinstance(item, EntailmentInput):
            # The names-and-numbers rule decides some before any call: a fixed rule
            # re-judges what the old one decided.
            payload["rule"] = RULE_VERSION
        if isinstance(item, AnswerInput) and item.answer_check in ("gold", "both"):
            payload["gold_rules"] = GOLD_RULE_VERSION
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


#: One batch's outcomes, in input order (a JudgeError where a call failed outright).
Outcomes = list[JudgeOutcome | JudgeError]


class JudgeSession(Protocol):
    """Batches sent to one judge together: they share its connections and its cap on
    the requests in flight, so the next batch's calls fill the slots the last calls of
    the one before leave free, and the caller stores one batch while others are judged."""

    def submit(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> Future[Outcomes]:
        """Start judging `inputs` (as `Judge.judge_many` does); their outcomes, later."""
        ...


class Judge(Protocol):
    identity: JudgeIdentity

    def session(self) -> AbstractContextManager[JudgeSession]:
        """A session for many batches; leaving it cancels the calls still running."""
        ...

    def judge_many(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> list[JudgeOutcome | JudgeError]:
        """Judge every input, concurrently as the judge allows; a call that failed outright
        leaves its `JudgeError` in place, so one failure loses none of the others' work. `on_judged`
        hears each judgment end; a step under `explain_below` gets a written reason."""
        ...


class JudgeUnavailable(Exception):
    """Some judge calls of a run failed outright; the message says why (the first error).
    `permanent`: the server refused (a 4xx); grading again cannot help until the setup changes."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent
