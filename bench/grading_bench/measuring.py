"""Measuring the judge client: timed `judge_many`, the probes, one timed `run_grade`."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grading_bench.content import passage_text
from grading_bench.judge_server import JudgeProcess

if TYPE_CHECKING:
    from grading.judge import JudgeIdentity, JudgeInput, JudgeOutcome, OpenAIJudge
    from grading.llm.client import JudgeError
    from grading.services import GradeReport
    from submissions.models import Run


class TimedJudge:
    """Wraps a judge to time what `run_grade` spends inside `judge_many`."""

    def __init__(self, inner: OpenAIJudge) -> None:
        self.inner = inner
        self.identity: JudgeIdentity = inner.identity
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.batches = 0
        self.calls = 0

    def judge_many(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> list[JudgeOutcome | JudgeError]:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return self.inner.judge_many(inputs, on_judged=on_judged,
                                         explain_below=explain_below)
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += time.process_time() - cpu
            self.batches += 1
            self.calls += len(inputs)


def make_judge(base_url: str, concurrency: int, *, model: str = "bench",
               timeout: float = 30.0) -> OpenAIJudge:
    from grading.judge import OpenAIJudge
    from grading.llm.client import JudgeConfig

    return OpenAIJudge(JudgeConfig(base_url=base_url, model=model, concurrency=concurrency,
                                   timeout=timeout))


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


def probe_server(server: JudgeProcess, requests: int, passage_words: int) -> None:
    """The fake server alone, then the judge client alone: what each can sustain."""
    from grading.judge import EntailmentInput
    from grading.llm.inputs import entailment_request

    request = entailment_request(passage=passage_text(0, passage_words), nugget="probe")
    body = json.dumps({"model": "bench", "messages": request.messages,
                       "response_format": request.response_format, "temperature": 0.0,
                       "max_tokens": 1024, "seed": 0}).encode()
    server_cpu = server.stats()["cpu_seconds"]
    started, cpu = time.perf_counter(), time.process_time()
    asyncio.run(_raw_http(server.port, requests, server.concurrency, body))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    server_cpu = server.stats()["cpu_seconds"] - server_cpu
    _rate_line("fake server, bare asyncio HTTP client", requests, elapsed, server.ideal)
    print(f"    CPU per call: fake server {server_cpu / requests * 1000:.2f} ms, "
          f"bare client {cpu / requests * 1000:.2f} ms")

    judge = make_judge(server.base_url, server.client_concurrency)
    inputs = [EntailmentInput(passage=passage_text(i, passage_words), nugget=f"probe {i}")
              for i in range(requests)]
    started, cpu = time.perf_counter(), time.process_time()
    outcomes = judge.judge_many(inputs)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert all(not isinstance(o, Exception) and not o.needs_review for o in outcomes), (
        judge.errors[:3])
    _rate_line("OpenAIJudge.judge_many, one batch, no DB", requests, elapsed, server.ideal)
    print(f"    CPU per call: judge client (openai + httpx) {cpu / requests * 1000:.2f} ms")

    # The same client against a server that answers at once: the most it can issue.
    instant = JudgeProcess(0.0, server.concurrency)
    try:
        judge = make_judge(instant.base_url, server.client_concurrency)
        started, cpu = time.perf_counter(), time.process_time()
        judge.judge_many(inputs)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        instant.stop()
    _rate_line("the same against a zero-latency server", requests, elapsed, server.ideal)
    print(f"    CPU per call: judge client {cpu / requests * 1000:.2f} ms; this is the "
          f"client's ceiling on this machine now")


def _rate_line(what: str, count: int, elapsed: float, ideal: float) -> None:
    rate = count / elapsed
    print(f"  {what + ':':<42} {count:6,} calls in {elapsed:6.2f} s = {rate:6.1f}/s, "
          f"{rate / ideal:.3f} of ideal")


@dataclass
class Graded:
    report: GradeReport
    elapsed: float
    cpu_seconds: float
    judge: TimedJudge


def grade(run: Run, server: JudgeProcess, batch: int) -> Graded:
    from grading.services import run_grade

    judge = TimedJudge(make_judge(server.base_url, server.client_concurrency))
    started, cpu = time.perf_counter(), time.process_time()
    report = run_grade(run=run, judge=judge, batch=batch)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if judge.inner.errors:
        print(f"  judge errors: {judge.inner.errors[:3]}")
    return Graded(report, elapsed, cpu, judge)
