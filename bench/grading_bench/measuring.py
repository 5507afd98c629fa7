"""Measuring the judge clients side by side, the fake server alone, one timed `run_grade`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grading_bench.content import passage_text
from grading_bench.judge_server import JudgeProcess

if TYPE_CHECKING:
    from grading.judge import JudgeIdentity, JudgeInput, JudgeOutcome, JudgeSession
    from grading.llm.calls import JudgeError
    from grading.llm.inputs import JudgeRequest
    from grading.openai_judge import OpenAIJudge
    from grading.r2c2.pipeline import GradeReport
    from submissions.models import Run


class TimedJudge:
    """Wraps a judge to count the batches and inputs `run_grade` sends it."""

    def __init__(self, inner: OpenAIJudge) -> None:
        self.inner = inner
        self.identity: JudgeIdentity = inner.identity
        self.batches = 0
        self.calls = 0

    def judge_many(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> list[JudgeOutcome | JudgeError]:
        self.batches += 1
        self.calls += len(inputs)
        return self.inner.judge_many(inputs, on_judged=on_judged, explain_below=explain_below)

    @contextlib.contextmanager
    def session(self) -> Iterator[JudgeSession]:
        with self.inner.session() as inner:
            yield _CountedSession(self, inner)


@dataclass
class _CountedSession:
    judge: TimedJudge
    inner: JudgeSession

    def submit(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> Future[list[JudgeOutcome | JudgeError]]:
        self.judge.batches += 1
        self.judge.calls += len(inputs)
        return self.inner.submit(inputs, on_judged=on_judged, explain_below=explain_below)


def make_judge(base_url: str, concurrency: int, *, model: str = "bench",
               timeout: float = 30.0, transport: str = "auto") -> OpenAIJudge:
    from grading.llm.calls import JudgeConfig
    from grading.openai_judge import OpenAIJudge

    return OpenAIJudge(JudgeConfig(base_url=base_url, model=model, concurrency=concurrency,
                                   timeout=timeout, transport=transport))


async def _raw_http(port: int, requests: int, concurrency: int, body: bytes) -> None:
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()

    async def worker(count: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(count):
            writer.write(head + body)
            await writer.drain()
            response = await reader.readuntil(b"\r\n\r\n")
            length = response.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0]
            await reader.readexactly(int(length))
        writer.close()
        await writer.wait_closed()

    shares = [requests // concurrency + (i < requests % concurrency) for i in range(concurrency)]
    await asyncio.gather(*(worker(n) for n in shares))


def _probe_body(passage_words: int) -> tuple[JudgeRequest[Any], bytes]:
    from grading.llm.subtasks import entailment_v2

    request = entailment_v2(passage=passage_text(0, passage_words), nugget="probe")
    return request, json.dumps(_openai_arguments(request)).encode()


def _openai_arguments(request: JudgeRequest[Any]) -> dict[str, Any]:
    """What the judge client sends for a verdict call (grading/llm/client.py)."""
    return {"model": "bench", "messages": request.messages,
            "response_format": request.response_format, "temperature": 0.0,
            "max_tokens": 1024, "seed": 0, "logprobs": True, "top_logprobs": 5}


def probe_server(server: JudgeProcess, requests: int, passage_words: int) -> None:
    """The fake server alone, driven by a bare asyncio HTTP client: what it sustains."""
    _, body = _probe_body(passage_words)
    server_cpu = server.stats()["cpu_seconds"]
    started, cpu = time.perf_counter(), time.process_time()
    asyncio.run(_raw_http(server.port, requests, server.concurrency, body))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    server_cpu = server.stats()["cpu_seconds"] - server_cpu
    rate_line("fake server, bare asyncio HTTP client", requests, elapsed, server.ideal)
    print(f"    CPU per call: fake server {server_cpu / requests * 1000:.2f} ms, "
          f"bare client {cpu / requests * 1000:.2f} ms")


#: The clients compared, side by side: (name, how one verdict call is made).
CLIENTS = ("openai SDK, default (httpx) transport", "openai SDK, aiohttp transport",
           "judge client, plain httpx pool", "judge client, aiohttp")


def probe_clients(server: JudgeProcess, requests: int, passage_words: int) -> None:
    """Each client making `requests` verdict calls (entailment, with logprobs) against
    the fake judge at its latency, then against one that answers at once: the rate, its
    ratio to the ideal, and the client's CPU per call (this process's CPU time).

    The openai SDK variants make the call and read the verdict's text and logprobs off
    the completion it returns; the judge client's (grading/llm/client.py, what grading
    uses) do all a judgment's call does: send, parse, read the probability, record.
    """
    instant = JudgeProcess(0.0, server.concurrency)
    try:
        for name in CLIENTS:
            if name == "openai SDK, aiohttp transport" and not _has_aiohttp():
                print(f"  {name}: aiohttp is not installed, not measured")
                continue
            for target in (server, instant):
                started, cpu = time.perf_counter(), time.process_time()
                asyncio.run(_client_calls(name, target, requests, passage_words))
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
                what = name if target is server else "  the same, zero-latency server"
                rate_line(what, requests, elapsed, server.ideal,
                          extra=f"; CPU {cpu / requests * 1000:.2f} ms/call")
    finally:
        instant.stop()


def _has_aiohttp() -> bool:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


async def _client_calls(name: str, server: JudgeProcess, requests: int,
                        passage_words: int) -> None:
    from grading.llm.calls import JudgeConfig
    from grading.llm.client import JudgeClient
    from grading.llm.subtasks import entailment_v2

    calls = [entailment_v2(passage=passage_text(i, passage_words), nugget=f"probe {i}")
             for i in range(requests)]
    slots = server.client_concurrency
    if name.startswith("judge client"):
        transport = "aiohttp" if name.endswith("aiohttp") else "httpx"
        config = JudgeConfig(base_url=server.base_url, model="bench", concurrency=slots,
                             timeout=30.0, transport=transport)
        async with JudgeClient(config) as client:
            outcomes = await client.judge_all(calls)
        assert all(not isinstance(o, Exception) and o.confidence for o in outcomes)
        return
    import openai

    http_client = openai.DefaultAioHttpClient() if name.endswith("aiohttp transport") else None
    sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="not-needed", timeout=30.0,
                             max_retries=0, http_client=http_client)
    semaphore = asyncio.Semaphore(slots)

    async def one(request: JudgeRequest[Any]) -> None:
        async with semaphore:
            completion = await sdk.chat.completions.create(**_openai_arguments(request))
        choice = completion.choices[0]
        assert choice.message.content and choice.logprobs and choice.logprobs.content

    try:
        await asyncio.gather(*(one(request) for request in calls))
    finally:
        await sdk.close()


def rate_line(what: str, count: int, elapsed: float, ideal: float, extra: str = "") -> None:
    rate = count / elapsed
    print(f"  {what + ':':<42} {count:6,} calls in {elapsed:6.2f} s = {rate:6.1f}/s, "
          f"{rate / ideal:.3f} of ideal{extra}")


@dataclass
class Graded:
    report: GradeReport
    elapsed: float
    cpu_seconds: float  # the whole process: the pipeline and the judge client
    pipeline_cpu_seconds: float  # the grading thread alone: hashing, queries, inserts
    judge: TimedJudge


def grade(run: Run, server: JudgeProcess, batch: int, prefetch: int | None = None) -> Graded:
    from django.test import override_settings

    from grading.r2c2.pipeline import run_grade

    judge = TimedJudge(make_judge(server.base_url, server.client_concurrency))
    with override_settings(**({} if prefetch is None else {"GRADING_PREFETCH": prefetch})):
        started, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        report = run_grade(run=run, judge=judge, batch=batch)
        elapsed = time.perf_counter() - started
        cpu, own = time.process_time() - cpu, time.thread_time() - own
    if judge.inner.errors:
        print(f"  judge errors: {judge.inner.errors[:3]}")
    return Graded(report, elapsed, cpu, own, judge)
