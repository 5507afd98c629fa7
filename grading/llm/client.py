"""An async judge client for any OpenAI-compatible server (vLLM, llama.cpp): one call per
request, retried as docs/judging.md ("What a call retries") says, returning the label with
its provenance; a slow server is waited for while its work counters rise."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

from grading.llm.calls import JudgeCall, JudgeConfig, JudgeError
from grading.llm.inputs import (
    JudgeRequest,
    Label,
)
from grading.llm.parsing import ReplyParseError, VerdictLabel
from grading.llm.progress import ServerProgress
from grading.llm.replies import (
    NOT_A_COMPLETION,
    NotACompletion,
    Reply,
    StatusError,
    describe,
    error_message,
    reply_of,
    retry_after,
    verdict_probability,
)
from grading.llm.transport import (
    HttpAnswer,
    NoAnswer,
    Transport,
    TransportSettings,
    make_transport,
)

TRANSIENT_GAVE_UP = "{kind} judgment failed after {attempts} attempts: {detail}"
TIMED_OUT = ("no reply after {seconds:g} s and the judge's server showed no progress "
             "meanwhile (GRADER_TIMEOUT is {timeout:g} s: the time it may show none)")
TIMED_OUT_UNWATCHED = ("no reply within {timeout:g} s, and the judge's server publishes "
                       "no progress counters: raise GRADER_TIMEOUT for a slower judge")
PERMANENT_FAILURE = "{kind} judgment refused by the server (HTTP {status}): {detail}"
logger = logging.getLogger(__name__)
# 408 and 409 are what servers send for a request they dropped under load.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
#: The temperature of the replies sampled to measure doubt where logprobs are missing:
#: the model's own distribution, so the share that agree estimates its probability.
SAMPLE_TEMPERATURE = 1.0
#: Alternatives asked for at each token: enough that both "true" and "false" are among
#: them at the verdict (they are the top two whenever the model reads the question).
TOP_LOGPROBS = 5


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
        samples: list[tuple[Reply, int]] = await asyncio.gather(*(
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
    ) -> tuple[Reply, int]:
        """One reply from the server, retrying transient failures, and the attempts so far;
`sample` > 0 asks for that sampled reply (SAMPLE_TEMPERATURE, its own seed)."""
        failures = 0
        while True:
            attempts += 1
            try:
                return await self._send(request, sample), attempts
            except (NoAnswer, StatusError, NotACompletion) as error:
                status = error.status if isinstance(error, StatusError) else None
                detail = describe(error)
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

    async def _send(self, request: JudgeRequest[Any], sample: int = 0) -> Reply:
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
            raise StatusError(answer.status, error_message(answer.body), answer.retry_after)
        try:
            completion = json.loads(answer.body)
        except ValueError as error:  # not JSON, or not UTF-8
            raise NotACompletion(NOT_A_COMPLETION.format(
                detail=f"body is not JSON: {error}")) from error
        return reply_of(completion, latency)

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
        asked = retry_after(error)
        if asked is not None:
            delay = max(delay, min(asked, cfg.backoff_max))
        return delay

    def _record(self, request: JudgeRequest[Label], reply: Reply, label: Label | None,
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
