"""An async judge client for any OpenAI-compatible server (vLLM, llama.cpp): one call per
request, retried as docs/judging.md ("What a call retries") says, returning the label with
its provenance; a slow server is waited for while its work counters rise."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import TracebackType
from typing import Any, Generic, Self, cast

from grading.llm.inputs import (
    DecodingParams,
    JudgeRequest,
    JudgmentKind,
    Label,
)
from grading.llm.parsing import ReplyParseError, VerdictLabel
from grading.llm.progress import ServerProgress
from grading.llm.transport import (
    HttpAnswer,
    NoAnswer,
    Transport,
    TransportSettings,
    make_transport,
)

logger = logging.getLogger(__name__)

TRANSIENT_GAVE_UP = "{kind} judgment failed after {attempts} attempts: {detail}"
TIMED_OUT = ("no reply after {seconds:g} s and the judge's server showed no progress "
             "meanwhile (GRADER_TIMEOUT is {timeout:g} s: the time it may show none)")
TIMED_OUT_UNWATCHED = ("no reply within {timeout:g} s, and the judge's server publishes "
                       "no progress counters: raise GRADER_TIMEOUT for a slower judge")
PERMANENT_FAILURE = "{kind} judgment refused by the server (HTTP {status}): {detail}"
NOT_A_COMPLETION = "server answered 200 without a chat completion ({detail})"

# 408 and 409 are what servers send for a request they dropped under load.
RETRYABLE_STATUSES = frozenset({408, 409, 429})


class _NotACompletion(Exception):
    """A 200 answer that is no chat completion: a server or proxy fault, so transient."""


class _StatusError(Exception):
    """The server answered with an error status; `message` is its own explanation."""

    def __init__(self, status: int, message: str, retry_after: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


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


@dataclass(frozen=True)
class _Reply:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency: float
    served_model: str | None
    finish_reason: str | None
    logprobs: list[Any] | None = None


#: The temperature of the replies sampled to measure doubt where logprobs are missing:
#: the model's own distribution, so the share that agree estimates its probability.
SAMPLE_TEMPERATURE = 1.0

#: Alternatives asked for at each token: enough that both "true" and "false" are among
#: them at the verdict (they are the top two whenever the model reads the question).
TOP_LOGPROBS = 5


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


class JudgeClient:
    """Sends judge requests to an OpenAI-compatible server; see the module docstring."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._slots = asyncio.Semaphore(config.concurrency)
        # Recorded with every call: worked out once, copied per call.
        self._decoding = config.decoding.as_dict()
        self.base_url = config.base_url
        self._http, self._progress = self._connect(config.base_url)
        self._retired: list[Transport] = []  # the pools of servers relocated from
        self._relocating = asyncio.Lock()

    def _connect(self, base_url: str) -> tuple[Transport, ServerProgress]:
        settings = TransportSettings(
            base_url=base_url, api_key=self.config.api_key or "not-needed",
            connect_timeout=self.config.timeout, connections=self.config.concurrency)
        http = make_transport(self.config.transport, settings)
        return http, ServerProgress(http, settings.metrics_url,
                                    fresh_for=min(1.0, self.config.timeout / 4))

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        for http in (*self._retired, self._http):
            await http.aclose()

    async def judge(self, request: JudgeRequest[Label]) -> JudgeCall[Label]:
        """Make one judgment: retry transient failures and unparsable replies."""
        attempts = 0
        parse_failures = 0
        while True:
            reply, attempts = await self._reply_with_retries(request, attempts)
            try:
                label = request.parse(reply.text)
            except ReplyParseError as error:
                parse_failures += 1
                logger.warning("%s reply did not parse (%d/%d): %s", request.kind,
                               parse_failures, self.config.parse_attempts, error)
                if parse_failures >= self.config.parse_attempts:
                    return self._record(request, reply, None, attempts, error=str(error))
                continue
            call = self._record(request, reply, label, attempts)
            if (isinstance(label, VerdictLabel) and call.confidence is None
                    and request.verdict_field and self.config.doubt_samples > 0):
                return await self._with_sampled_doubt(request, call, label)
            return call

    async def _with_sampled_doubt(self, request: JudgeRequest[Label], call: JudgeCall[Label],
                                  label: VerdictLabel) -> JudgeCall[Label]:
        """`call` with its confidence measured by agreement of `doubt_samples` resampled
        replies (a reply that does not parse is not counted); their cost is added."""
        samples: list[tuple[_Reply, int]] = await asyncio.gather(*(
            self._reply_with_retries(request, 0, sample=number)
            for number in range(1, self.config.doubt_samples + 1)))
        votes = [label.verdict]
        for reply, _ in samples:
            try:
                sampled = request.parse(reply.text)
            except ReplyParseError:
                continue
            if isinstance(sampled, VerdictLabel):
                votes.append(sampled.verdict)

        def total(counts: list[int | None]) -> int | None:
            known = [count for count in counts if count is not None]
            return sum(known) if known else None

        return replace(
            call,
            # The greedy verdict is the likelier of the two, so at least an even chance.
            confidence=max(0.5, votes.count(label.verdict) / len(votes)),
            confidence_from="samples",
            prompt_tokens=total([call.prompt_tokens, *(r.prompt_tokens for r, _ in samples)]),
            completion_tokens=total([call.completion_tokens,
                                     *(r.completion_tokens for r, _ in samples)]),
            latency=call.latency + sum(reply.latency for reply, _ in samples),
            attempts=call.attempts + sum(attempts for _, attempts in samples),
        )

    async def judge_all(
        self,
        requests: Iterable[JudgeRequest[Label]],
        *,
        on_settled: Callable[[], None] | None = None,
    ) -> list[JudgeCall[Label] | JudgeError]:
        """Judge many requests concurrently; outcomes in request order, a failure in its place,
`on_settled` called as each call ends (a progress bar)."""

        async def settled(request: JudgeRequest[Label]) -> JudgeCall[Label] | JudgeError:
            outcome = await self._settled(request)
            if on_settled is not None:
                on_settled()
            return outcome

        return list(await asyncio.gather(*(settled(request) for request in requests)))

    async def judge_each(
        self, requests: Iterable[JudgeRequest[Label]]
    ) -> AsyncIterator[tuple[JudgeRequest[Label], JudgeCall[Label] | JudgeError]]:
        """Judge many requests concurrently, yielding (request, outcome) as each ends, for callers
that store each judgment at once; leaving the loop early cancels the rest."""
        tasks = [asyncio.ensure_future(self._paired(request)) for request in requests]
        try:
            for next_done in asyncio.as_completed(tasks):
                yield await next_done
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _paired(
        self, request: JudgeRequest[Label]
    ) -> tuple[JudgeRequest[Label], JudgeCall[Label] | JudgeError]:
        return request, await self._settled(request)

    async def _settled(self, request: JudgeRequest[Label]) -> JudgeCall[Label] | JudgeError:
        try:
            return await self.judge(request)
        except JudgeError as error:
            return error

    async def _reply_with_retries(
        self, request: JudgeRequest[Any], attempts: int, *, sample: int = 0
    ) -> tuple[_Reply, int]:
        """One reply from the server, retrying transient failures, and the attempts so far;
`sample` > 0 asks for that sampled reply (SAMPLE_TEMPERATURE, its own seed)."""
        failures = 0
        while True:
            attempts += 1
            try:
                return await self._send(request, sample), attempts
            except (NoAnswer, _StatusError, _NotACompletion) as error:
                status = error.status if isinstance(error, _StatusError) else None
                detail = _describe(error)
                if status is not None and status < 500 and status not in RETRYABLE_STATUSES:
                    raise JudgeError(
                        PERMANENT_FAILURE.format(kind=request.kind, status=status,
                                                 detail=str(error.args[0])),
                        permanent=True, status=status, attempts=attempts) from error
                failures += 1
                if failures > self.config.max_retries:
                    raise JudgeError(
                        TRANSIENT_GAVE_UP.format(kind=request.kind, attempts=attempts,
                                                 detail=detail),
                        permanent=False, status=status, attempts=attempts) from error
                if isinstance(error, NoAnswer) and not error.timed_out:
                    await self._relocate()
                delay = self._backoff(failures, error)
                logger.warning("%s judgment: %s; retry %d/%d in %.2f s", request.kind,
                               detail, failures, self.config.max_retries, delay)
                await asyncio.sleep(delay)

    async def _send(self, request: JudgeRequest[Any], sample: int = 0) -> _Reply:
        cfg = self.config
        wants_logprobs = request.verdict_field is not None
        seed = cfg.seed
        if sample and seed is not None:
            seed += sample
        payload: dict[str, Any] = {
            "model": cfg.model, "messages": request.messages,
            "response_format": request.response_format,
            "temperature": SAMPLE_TEMPERATURE if sample else cfg.temperature,
            "max_tokens": cfg.max_tokens,
        }
        if seed is not None:
            payload["seed"] = seed
        if wants_logprobs:
            payload["logprobs"] = True
            payload["top_logprobs"] = TOP_LOGPROBS
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        async with self._slots:
            started = time.perf_counter()
            answer = await self._awaited(self._http.post("chat/completions", body))
            latency = time.perf_counter() - started
        if not 200 <= answer.status < 300:
            raise _StatusError(answer.status, _error_message(answer.body), answer.retry_after)
        try:
            completion = json.loads(answer.body)
        except ValueError as error:  # not JSON, or not UTF-8
            raise _NotACompletion(NOT_A_COMPLETION.format(
                detail=f"body is not JSON: {error}")) from error
        return _reply_of(completion, latency)

    async def _awaited(self, posted: Awaitable[HttpAnswer]) -> HttpAnswer:
        """The server's answer; waited for in rounds of `timeout` seconds for as long as
        the server's work counters rise from one round to the next."""
        timeout = self.config.timeout
        task = asyncio.ensure_future(posted)
        started = time.monotonic()
        seen: float | None = None
        try:
            while True:
                done, _ = await asyncio.wait((task,), timeout=timeout)
                if done:
                    return task.result()
                work = await self._progress.reading()
                if work is None:
                    raise NoAnswer(TIMED_OUT_UNWATCHED.format(timeout=timeout),
                                   timed_out=True)
                if seen is not None and work <= seen:
                    raise NoAnswer(TIMED_OUT.format(seconds=time.monotonic() - started,
                                                    timeout=timeout), timed_out=True)
                seen = work
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _relocate(self) -> None:
        """After a connection error: go where the server is now, if it moved."""
        relocate = self.config.relocate
        if relocate is None:
            return
        async with self._relocating:
            base_url = await asyncio.to_thread(relocate)
            if base_url != self.base_url:
                logger.warning("the judge's server moved from %s to %s", self.base_url,
                               base_url)
                self._retired.append(self._http)
                self.base_url = base_url
                self._http, self._progress = self._connect(base_url)

    def _backoff(self, failures: int, error: Exception) -> float:
        """Exponential backoff with jitter: half fixed, half random, capped."""
        cfg = self.config
        ceiling = min(cfg.backoff_max, cfg.backoff_initial * 2.0 ** (failures - 1))
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
        retry_after = _retry_after(error)
        if retry_after is not None:
            delay = max(delay, min(retry_after, cfg.backoff_max))
        return delay

    def _record(self, request: JudgeRequest[Label], reply: _Reply, label: Label | None,
                attempts: int, *, error: str | None = None) -> JudgeCall[Label]:
        cfg = self.config
        confidence = None
        if isinstance(label, VerdictLabel) and request.verdict_field and reply.logprobs:
            confidence = verdict_probability(reply.logprobs, label.verdict)
        return JudgeCall(
            kind=request.kind,
            label=label,
            raw_output=reply.text,
            prompt_version=request.prompt_version,
            model=cfg.model,
            decoding=dict(self._decoding),
            request=request,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency=reply.latency,
            attempts=attempts,
            needs_review=label is None,
            error=error,
            served_model=reply.served_model,
            finish_reason=reply.finish_reason,
            confidence=confidence,
            confidence_from=None if confidence is None else "logprobs",
        )


def _reply_of(completion: Any, latency: float) -> _Reply:
    """The reply in a chat-completion body (parsed JSON), or `_NotACompletion`."""
    choices = completion.get("choices") if isinstance(completion, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise _NotACompletion(NOT_A_COMPLETION.format(detail="no choices"))
    assert isinstance(choice, dict)
    # No content (a refusal, say) is a reply that does not parse, not a server fault.
    text = message.get("content")
    usage = completion.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    logprobs = choice.get("logprobs")
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
    return _Reply(
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


def _error_message(body: bytes) -> str:
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


def _retry_after(error: Exception) -> float | None:
    if not isinstance(error, _StatusError) or error.retry_after is None:
        return None
    try:
        return float(error.retry_after)
    except ValueError:
        return None  # an HTTP date; the backoff alone will do


def _describe(error: Exception) -> str:
    if isinstance(error, NoAnswer):
        return str(error) if error.timed_out else f"connection error: {error}"
    if isinstance(error, _StatusError):
        return f"HTTP {error.status}: {error}"
    return str(error)
