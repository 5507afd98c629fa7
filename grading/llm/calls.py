"""What a judge call is configured with (`JudgeConfig`), what it gives back (`JudgeCall`,
the label with its provenance) and how it fails (`JudgeError`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, cast

from grading.llm.inputs import (
    DecodingParams,
    JudgeRequest,
    JudgmentKind,
    Label,
)


class JudgeError(Exception):
    """A judge call failed; `permanent` says whether trying again later can help."""

    def __init__(self, message: str, *, permanent: bool, status: int | None = None,
                 attempts: int = 1) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.status = status
        self.attempts = attempts


@dataclass(frozen=True)
class JudgeConfig:
    """Where the judge is and how to talk to it (GRADER_* settings): `base_url` with its API
prefix, `timeout` without progress, retries, replies asked for before review."""

    base_url: str
    model: str
    api_key: str = "not-needed"
    concurrency: int = 8
    timeout: float = 120.0
    max_retries: int = 5
    parse_attempts: int = 3
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 0
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    # Extra sampled replies per verdict where the server sends no logprobs (0: leave the
    # doubt unmeasured rather than pay for it).
    doubt_samples: int = 2
    # The HTTP transport (grading/llm/transport.py); "auto": the cheapest installed.
    transport: str = "auto"
    relocate: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    @property
    def decoding(self) -> DecodingParams:
        """The decoding parameters every call sends (part of the judge's identity)."""
        return DecodingParams(temperature=self.temperature, max_tokens=self.max_tokens,
                              seed=self.seed)


@dataclass(frozen=True)
class JudgeCall(Generic[Label]):
    """One judgment with everything needed to audit or replay it: the label (None exactly when
`needs_review`, `error` saying why), the judge's confidence, the last reply and its cost."""

    kind: JudgmentKind
    label: Label | None
    raw_output: str
    prompt_version: str
    model: str
    decoding: dict[str, float | int | None]
    request: JudgeRequest[Any] = field(repr=False, compare=False)
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float
    attempts: int
    needs_review: bool
    error: str | None = None
    served_model: str | None = None
    finish_reason: str | None = None
    confidence: float | None = None
    # How `confidence` was measured: "logprobs", or "samples" (agreement of resampled
    # replies, where the server sent no logprobs).
    confidence_from: str | None = None

    @cached_property
    def input_hash(self) -> str:
        """The cache key of the request under this judge, worked out when first asked for so
that hashing never delays the replies waiting on the event loop."""
        decoding = DecodingParams(**cast(dict[str, Any], self.decoding))
        return self.request.input_hash(model=self.model, decoding=decoding)
