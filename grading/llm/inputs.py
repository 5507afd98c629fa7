"""What the judge is asked: a request (prompt, schema, parser) and its content hash, the
cache key of a judgment under a judge's model and decoding (docs/judging.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Generic, Literal, TypeVar

from grading.llm.prompts import ChatMessage
from grading.llm.schemas import JsonObject

JudgmentKind = str  # a subtask of subtasks.py, or a RUBRIC kind of rubric.py
# Any parsed reply: the R2C2 labels, and the RUBRIC ones of grading/llm/rubric.py (a
# self-rated grade, a drafted test bank), which import this module.
Label = TypeVar("Label")
#: The one boolean a v2 subtask replies with (its verdict comes first, and alone).
VerdictField = Literal["entailed", "correct", "relevant"]


@dataclass(frozen=True)
class DecodingParams:
    """Sampling settings sent with every call; part of a judgment's provenance."""

    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 0

    def as_dict(self) -> dict[str, float | int | None]:
        """The parameters as stored and hashed (temperature always a float)."""
        params = asdict(self)
        params["temperature"] = float(self.temperature)
        return params


@dataclass(frozen=True)
class JudgeRequest(Generic[Label]):
    """One judgment to make: the messages, the reply schema and the reply parser."""

    kind: JudgmentKind
    prompt_version: str
    messages: list[ChatMessage]
    response_format: JsonObject
    parse: Callable[[str], Label] = field(compare=False, repr=False)
    # Set where the reply's first value is its verdict: the client then asks for token
    # logprobs and records the judge's probability for the verdict it gave.
    verdict_field: VerdictField | None = None

    def input_hash(self, *, model: str, decoding: DecodingParams) -> str:
        """The cache key of this request under a judge (`model`, `decoding`)."""
        return input_hash(prompt_version=self.prompt_version, model=model,
                          messages=self.messages, decoding=decoding,
                          response_format=self.response_format)


def input_hash(
    *,
    prompt_version: str,
    model: str,
    messages: Sequence[Mapping[str, object]],
    decoding: DecodingParams,
    response_format: JsonObject | None = None,
) -> str:
    """sha256 of a canonical JSON (sorted keys, no spaces, UTF-8 as is) of all that decides a
    judgment, the reply schema included: the same input hashes the same in any process, and
    a new schema never reuses old judgments."""
    payload = {
        "prompt_version": prompt_version,
        "model": model,
        "messages": [dict(message) for message in messages],
        "decoding": decoding.as_dict(),
        "response_format": response_format,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
