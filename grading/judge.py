"""The seam between the grading pipeline and an LLM judge.

The pipeline hands `JudgeInput`s to a `Judge` and gets one `JudgeOutcome` (or None for
a call that failed outright) back per input, in order. `OpenAIJudge` is the real one:
the OpenAI chat protocol (grading/llm/client.py) to vLLM or the embedded llama.cpp
server. Tests use it too, against a scripted server on loopback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from grading.llm.client import JudgeCall, JudgeClient, JudgeConfig, JudgeError
from grading.llm.inputs import DecodingParams, JudgeRequest, answer_request, entailment_request
from grading.llm.parsing import AnswerLabel, EntailmentLabel


@dataclass(frozen=True)
class EntailmentInput:
    """Step 1: does the passage at the PassageKey entail the nugget?"""

    passage: str
    nugget: str

    def request(self) -> JudgeRequest[Any]:
        return entailment_request(passage=self.passage, nugget=self.nugget)

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

    def request(self) -> JudgeRequest[Any]:
        return answer_request(
            question=self.question, answer=self.answer, nuggets=dict(self.nuggets),
            answer_check=self.answer_check,  # type: ignore[arg-type]
            gold_answers=self.gold_answers,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "question": self.question, "answer": self.answer,
            "nuggets": [{"num": num, "text": text} for num, text in self.nuggets],
            "answer_check": self.answer_check, "gold_answers": list(self.gold_answers),
        }


JudgeInput = EntailmentInput | AnswerInput


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


@dataclass(frozen=True)
class JudgeIdentity:
    """Who judges: the model and decoding parameters (part of every cache key)."""

    model: str
    decoding: DecodingParams

    def input_hash(self, item: JudgeInput) -> str:
        return item.request().input_hash(model=self.model, decoding=self.decoding)


class Judge(Protocol):
    identity: JudgeIdentity

    def judge_many(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
    ) -> list[JudgeOutcome | None]:
        """Judge every input, concurrently as the judge allows; None where a call failed.

        `on_judged` is called as each call ends (how the `grade` command shows progress).
        """
        ...


class JudgeUnavailable(Exception):
    """Some judge calls failed outright (server down, permanent 4xx); retry the run later."""


def _outcome(call: JudgeCall[Any]) -> JudgeOutcome:
    label: dict[str, Any] | None = None
    reason, nugget_reasons = "", {}
    if isinstance(call.label, EntailmentLabel):
        label, reason = {"entailed": call.label.entailed}, call.label.reason
    elif isinstance(call.label, AnswerLabel):
        label = {"correct": call.label.correct, "relevant": sorted(call.label.relevant)}
        reason = call.label.reason
        nugget_reasons = {str(num): text for num, text in call.label.nugget_reasons.items()}
    return JudgeOutcome(
        label=label, reason=reason, nugget_reasons=nugget_reasons, raw_output=call.raw_output,
        prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
        latency_seconds=call.latency, attempts=call.attempts, needs_review=call.needs_review,
        error=call.error or "",
    )


class OpenAIJudge:
    """A judge behind an OpenAI-compatible chat-completions server."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.identity = JudgeIdentity(model=config.model, decoding=config.decoding)
        self.errors: list[str] = []

    def judge_many(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
    ) -> list[JudgeOutcome | None]:
        return asyncio.run(self._judge_many(inputs, on_judged))

    async def _judge_many(
        self, inputs: Sequence[JudgeInput], on_judged: Callable[[], None] | None,
    ) -> list[JudgeOutcome | None]:
        # One client per batch: its HTTP pool belongs to this event loop.
        async with JudgeClient(self.config) as client:
            calls = await client.judge_all((item.request() for item in inputs),
                                           on_settled=on_judged)
        outcomes: list[JudgeOutcome | None] = []
        for call in calls:
            if isinstance(call, JudgeError):
                self.errors.append(str(call))
                outcomes.append(None)
            else:
                outcomes.append(_outcome(call))
        return outcomes
