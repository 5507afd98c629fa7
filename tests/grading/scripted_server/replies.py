"""What a responder is given (a `ChatRequest`) and what it returns (a step).

The steps are the server's whole vocabulary:
- `Reply(content)`: a 200 chat completion with that message content, token logprobs if
  given, and usage (estimated from the characters where not given);
- `Status(code)`: an error status with an OpenAI-style error body (and Retry-After);
- `RawBody(body)`: a 200 with that body, whatever it is (a broken server or proxy);
- `NoReply()`: no answer at all while the server runs, so the client's timeout fires
  whatever its length and however loaded the machine; the server's teardown ends it.
Each but `NoReply` may carry `after`, the name of a gate the server waits for before
answering (`ScriptedServer.release` opens it), and `latency`, seconds the answer takes
once the request holds one of the server's slots (the benchmark's model of a GPU; tests
leave it at 0, since nothing in a test may wait on the clock).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from typing import Any

#: What OpenAI-compatible servers say when they refuse a request (vLLM and OpenAI alike).
BAD_API_KEY = "Incorrect API key provided: sk-wr***ng."
UNKNOWN_MODEL = "The model `{model}` does not exist."


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    """One POST /v1/chat/completions as a responder sees it: the JSON body and its parts."""

    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [m for m in self.body.get("messages") or [] if isinstance(m, dict)]

    @property
    def user(self) -> str:
        """The last user message's text ("" if there is none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content)
        return ""

    @property
    def schema_name(self) -> str:
        """The reply schema's name (`response_format.json_schema.name`), or ""."""
        return str(self._json_schema.get("name", ""))

    @property
    def schema(self) -> dict[str, Any]:
        """The reply's JSON schema, or {}."""
        schema = self._json_schema.get("schema")
        return schema if isinstance(schema, dict) else {}

    @property
    def temperature(self) -> float:
        return float(self.body.get("temperature") or 0)

    @property
    def seed(self) -> int | None:
        seed = self.body.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def logprobs(self) -> bool:
        """Whether the client asked for token logprobs."""
        return bool(self.body.get("logprobs"))

    @property
    def top_logprobs(self) -> int:
        return int(self.body.get("top_logprobs") or 0)

    def section(self, label: str) -> str:
        """The paragraph under `LABEL:` in the user message (KeyError if there is none).

        The one place a responder reads the prompt's text: a chat request carries the
        judge's inputs (the claim, the answer, the nugget) nowhere else, and the judge's
        prompts (grading/llm/prompts.py, subtasks.py) put each under its label, as one
        paragraph. The label must open the message or a paragraph, so "ANSWER" is not
        found inside "GOLD ANSWER:".
        """
        found = re.search(rf"(?:\A|\n\n){re.escape(label)}:\n(.*?)(?:\n\n|\Z)", self.user,
                          flags=re.S)
        if found is None:
            raise KeyError(f"the user message has no {label}: section")
        return found.group(1).strip()

    @property
    def _json_schema(self) -> dict[str, Any]:
        response_format = self.body.get("response_format")
        block = response_format.get("json_schema") if isinstance(response_format, dict) else None
        return block if isinstance(block, dict) else {}


@dataclass(frozen=True, kw_only=True)
class _Timing:
    after: str | None = None
    latency: float = 0.0


@dataclass(frozen=True)
class Reply(_Timing):
    """A successful chat completion whose message content is `content`.

    `logprobs` is the choice's `logprobs.content` (one entry per token); the usage is a
    quarter of the characters of the prompt and of the content where not given.
    """

    content: str
    logprobs: list[dict[str, Any]] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status(_Timing):
    """An HTTP error answer, its body as OpenAI-compatible servers send it."""

    code: int
    message: str = "scripted failure"
    error_type: str = "scripted"
    error_code: str | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class RawBody(_Timing):
    """A 200 whose body is `body` as is (a broken server or proxy)."""

    body: bytes


@dataclass(frozen=True)
class NoReply:
    """A request the server never answers while it runs (the client times out)."""


Step = Reply | Status | RawBody | NoReply


def bad_api_key() -> Status:
    """A refusal as a server whose API key is not the one the client sends answers."""
    return Status(401, BAD_API_KEY, error_type="invalid_request_error",
                  error_code="invalid_api_key")


def unknown_model(model: str) -> Status:
    """A refusal as a server that does not serve `model` answers."""
    return Status(404, UNKNOWN_MODEL.format(model=model), error_type="NotFoundError",
                  error_code="model_not_found")


def verdict_logprobs(verdict: bool, probability: float) -> list[dict[str, Any]]:
    """The token of a bare `true`/`false` reply as llama.cpp reports it: the verdict
    carrying `probability`, its alternative the rest."""
    chosen, other = ("true", "false") if verdict else ("false", "true")
    alternatives = [{"token": chosen, "logprob": math.log(probability), "bytes": None}]
    if probability < 1:
        alternatives.append({"token": other, "logprob": math.log(1 - probability),
                             "bytes": None})
    return [{"token": chosen, "logprob": math.log(probability), "bytes": None,
             "top_logprobs": alternatives}]


def completion_body(reply: Reply, request: ChatRequest) -> dict[str, Any]:
    """The OpenAI chat-completion body of `reply` to `request`."""
    prompt_chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    prompt_tokens = (prompt_chars // 4 if reply.prompt_tokens is None
                     else reply.prompt_tokens)
    completion_tokens = (len(reply.content) // 4 if reply.completion_tokens is None
                         else reply.completion_tokens)
    choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason,
                              "message": {"role": "assistant", "content": reply.content}}
    if reply.logprobs is not None:
        choice["logprobs"] = {"content": reply.logprobs}
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model or "scripted",
        "choices": [choice],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def error_body(status: Status) -> dict[str, Any]:
    error: dict[str, Any] = {"message": status.message, "type": status.error_type}
    if status.error_code is not None:
        error["code"] = status.error_code
    return {"error": error}
