"""Reading a chat-completion reply: its text, cost and token logprobs, the judge's
probability for its verdict, and what an error status or a failed request says."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grading.llm.transport import (
    NoAnswer,
)

NOT_A_COMPLETION = "server answered 200 without a chat completion ({detail})"


class NotACompletion(Exception):
    """A 200 answer that is no chat completion: a server or proxy fault, so transient."""


class StatusError(Exception):
    """The server answered with an error status; `message` is its own explanation."""

    def __init__(self, status: int, message: str, retry_after: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float
    served_model: str | None
    finish_reason: str | None
    logprobs: list[Any] | None = None


def verdict_probability(tokens: Sequence[Any], verdict: bool) -> float | None:
    """The judge's probability for `verdict` at the first true/false token of a reply,
renormalised over the two candidates, which the servers report before the grammar masks."""
    for token in tokens:
        if not isinstance(token, Mapping):
            continue
        word = str(token.get("token", "")).strip().lower()
        if word not in ("true", "false"):
            continue
        mass = {"true": 0.0, "false": 0.0}
        for alternative in token.get("top_logprobs") or []:
            other = str(alternative.get("token", "")).strip().lower()
            if other in mass:
                mass[other] += math.exp(float(alternative["logprob"]))
        chosen = "true" if verdict else "false"
        if mass[chosen] == 0.0:
            mass[chosen] = math.exp(float(token["logprob"]))
        total = mass["true"] + mass["false"]
        return mass[chosen] / total if total > 0 else None
    return None


def reply_of(completion: Any, latency: float) -> Reply:
    """The reply in a chat-completion body (parsed JSON), or `NotACompletion`."""
    choices = completion.get("choices") if isinstance(completion, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise NotACompletion(NOT_A_COMPLETION.format(detail="no choices"))
    assert isinstance(choice, dict)
    # No content (a refusal, say) is a reply that does not parse, not a server fault.
    text = message.get("content")
    usage = completion.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    logprobs = choice.get("logprobs")
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
    return Reply(
        text=text if isinstance(text, str) else "",
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        latency=latency,
        served_model=_text(completion.get("model")),
        finish_reason=_text(choice.get("finish_reason")),
        logprobs=list(tokens) if isinstance(tokens, list) and tokens else None,
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def error_message(body: bytes) -> str:
    """The server's own explanation of an error status: the OpenAI-style error body's
    message where there is one, else the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message:
        return message
    text = body[:200].decode("utf-8", "replace").strip()
    return text or "no explanation given"


def retry_after(error: Exception) -> float | None:
    if not isinstance(error, StatusError) or error.retry_after is None:
        return None
    try:
        return float(error.retry_after)
    except ValueError:
        return None  # an HTTP date; the backoff alone will do


def describe(error: Exception) -> str:
    if isinstance(error, NoAnswer):
        return str(error) if error.timed_out else f"connection error: {error}"
    if isinstance(error, StatusError):
        return f"HTTP {error.status}: {error}"
    return str(error)
