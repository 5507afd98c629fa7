"""Benchmark: grading >= 5,000 nugget records through the R2C2 judge pipeline (issue 4).

Starts a local OpenAI-compatible fake judge in a child process: an asyncio HTTP/1.1
server on 127.0.0.1 that answers every chat completion after a fixed latency (default
50 ms) and serves at most C requests at once (default 16; more wait for a slot), so its
ideal throughput is C / latency. Its replies are valid and deterministic (a hash of the
prompt decides entailed, correct and relevant). It then builds a synthetic campaign in a
throwaway database, submitted through the real path (`run_submit`): one PR run and, per
batch size measured, one AC run of distinct nuggets (default 600 questions x 10 nuggets
= 6,000 entailment judgments plus 600 answer judgments). It prints, measured side by
side in this one run:
- the fake server alone, driven by a bare asyncio HTTP client, and the judge client
  alone (`OpenAIJudge.judge_many`, no database), against the ideal C / latency, with
  the CPU each spends per call; then the judge client against a zero-latency server:
  the most one process can issue on this machine;
- for each `run_grade` batch size: judgments made, elapsed, judgments/s and its ratio
  to the ideal (target: at least 0.9), with the time spent inside `judge_many` and
  outside it (hashing, queries, inserts, links) and the CPU per call on each side;
- the LLM calls the server receives on a second grading of the same campaign: the same
  runs graded again, and a new AC run with identical content (target: 0);
- with --embedded (the default), the judgments/s and seconds per judgment of the
  packaged llama.cpp judge (Qwen2.5-Coder-1.5B by default) on this machine, over a
  small sample of distinct nuggets (and a few answer evaluations) at concurrency 4.

Run: .venv/bin/python bench/bench_grading.py [--questions 600] [--latency 0.05]
     [--server-concurrency 16] [--client-concurrency C] [--batches 256,1024,8192]
     [--no-fake-judge] [--no-embedded] [--embedded-model qwen2.5-coder-1.5b]
     [--embedded-sample 24] [--embedded-answers 4]
The machine's other load shows in every figure (the load average is printed): the
judge client is CPU-bound at these rates, and llama.cpp slows down sharply when another
process competes for the cores.
Uses a throwaway SQLite database and media folder unless DATABASE_URL is set (then
the tables of that database are used; the campaign it creates is deleted afterwards).
The embedded model is taken from <repo>/var/models (installed from PyPI, 1.1 GB, if
it is not there yet).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from grading.judge import JudgeIdentity, JudgeInput, JudgeOutcome, OpenAIJudge
    from grading.llm.client import JudgeError
    from grading.services import GradeReport
    from submissions.models import Run

READY_PREFIX = "FAKE-JUDGE-READY "
PR_RUN = "BENCH-PO-1"
MAX_NUGGETS = 10


# --- the fake judge server (runs in a child process: its own GIL, its own core) -------

def fake_reply(body: dict[str, Any]) -> tuple[str, Any]:
    """(kind, reply JSON) for a chat-completions request of any R2C2 judge call.

    The kind comes from `response_format.json_schema.name`: the v2 subtasks
    ("r2c2_entailed", "r2c2_correct", "r2c2_relevant", grading/llm/subtasks.py) get a
    bare true/false, their "_reason" forms the verdict fixed by the schema and a reason;
    the v1 judgments ("r2c2_entailment", "r2c2_answer", else told apart by the user
    message) get their objects. The nuggets shown are the keys of the schema's
    `nugget_reasons`, else the "[n]" lines of the prompt; `relevant` names only those,
    and only if correct.
    """
    messages = body.get("messages") or []
    user = ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            user = content if isinstance(content, str) else json.dumps(content)
            break
    response_format = body.get("response_format")
    block = response_format.get("json_schema") if isinstance(response_format, dict) else None
    name = str(block.get("name", "")) if isinstance(block, dict) else ""
    digest = hashlib.sha256(user.encode("utf-8")).digest()
    subtask = name.removeprefix("r2c2_")
    if subtask in ("entailed", "correct", "relevant"):
        return subtask, digest[0] % 4 != 0
    if subtask.endswith("_reason") and isinstance(block, dict):
        field = subtask.removesuffix("_reason")
        fixed = block["schema"]["properties"][field]["enum"][0]
        return subtask, {field: fixed, "reason": "fake judge: decided by the prompt's hash"}
    is_answer = "answer" in name or (not name and "ANSWER:" in user and "NUGGETS:" in user)
    if not is_answer:
        return "entailment", {"reason": "fake judge: decided by the prompt's hash",
                              "entailed": digest[0] % 4 != 0}
    shown = _shown_nuggets(block, user)
    correct = digest[1] % 3 != 0
    relevant = [n for i, n in enumerate(shown) if digest[2 + i % 28] % 2 == 0] if correct else []
    return "answer", {
        "reason": "fake judge: decided by the prompt's hash",
        "correct": correct,
        "nugget_reasons": {str(n): f"nugget {n}: decided by the hash" for n in shown},
        "relevant": relevant,
    }


def _shown_nuggets(block: Any, user: str) -> list[int]:
    with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
        keys = block["schema"]["properties"]["nugget_reasons"]["properties"]
        return sorted(int(key) for key in keys)
    listed = user.split("NUGGETS:", 1)[-1]
    return sorted({int(n) for n in re.findall(r"^\[(\d+)\]", listed, flags=re.M)})


class FakeJudge:
    """The server's state: a slot semaphore of size C and counters."""

    def __init__(self, latency: float, concurrency: int) -> None:
        self.latency = latency
        self.concurrency = concurrency
        self.calls: Counter[str] = Counter()
        self.in_flight = self.max_in_flight = self.waiting = self.max_waiting = 0
        self.slots = asyncio.Semaphore(concurrency)

    async def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        self.waiting += 1
        self.max_waiting = max(self.max_waiting, self.waiting)
        async with self.slots:
            self.waiting -= 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                kind, label = fake_reply(body)
                await asyncio.sleep(self.latency)
            finally:
                self.in_flight -= 1
        self.calls[kind] += 1
        text = json.dumps(label)
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages") or []
                           if isinstance(m, dict))
        return {
            "id": f"fake-{sum(self.calls.values())}", "object": "chat.completion",
            "created": int(time.time()), "model": str(body.get("model", "fake")),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text) // 4,
                      "total_tokens": (prompt_chars + len(text)) // 4},
        }

    def stats(self) -> dict[str, Any]:
        return {"calls": dict(self.calls), "total": sum(self.calls.values()),
                "max_in_flight": self.max_in_flight, "max_waiting": self.max_waiting,
                "cpu_seconds": time.process_time()}

    async def respond(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        path = target.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/stats":
            return 200, self.stats()
        if method == "GET" and path in ("/health", "/v1/models"):
            return 200, {"status": "ok", "data": [{"id": "bench", "object": "model"}]}
        if method == "POST" and path.endswith("/chat/completions"):
            try:
                request = json.loads(body)
            except ValueError:
                return 400, {"error": {"message": "body is not JSON"}}
            if not isinstance(request, dict):
                return 400, {"error": {"message": "body is not a JSON object"}}
            return 200, await self.completion(request)
        return 404, {"error": {"message": f"no route {method} {path}"}}

    async def connection(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        """HTTP/1.1 with keep-alive: one request after another on this connection."""
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                        ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, target, _ = lines[0].split(" ", 2)
                except ValueError:
                    return
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    key, sep, value = line.partition(":")
                    if sep:
                        headers[key.strip().lower()] = value.strip()
                if headers.get("transfer-encoding", "").lower() == "chunked":
                    body = await _read_chunked(reader)
                else:
                    body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, payload = await self.respond(method, target, body)
                data = json.dumps(payload).encode()
                close = headers.get("connection", "").lower() == "close"
                writer.write(
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                    f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n".encode()
                    + data)
                await writer.drain()
                if close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def _serve(latency: float, concurrency: int) -> None:
    judge = FakeJudge(latency, concurrency)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def watch_stdin() -> None:
        # EOF on stdin: the parent closed it or died; either way, stop serving.
        while sys.stdin.readline():
            pass
        loop.call_soon_threadsafe(stop.set)

    server = await asyncio.start_server(judge.connection, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    threading.Thread(target=watch_stdin, name="watch-parent", daemon=True).start()
    print(f"{READY_PREFIX}{port}", flush=True)
    async with server:
        await stop.wait()


class FakeServer:
    """The fake judge in a child process (`--fake-server` mode of this file)."""

    def __init__(self, latency: float, concurrency: int,
                 client_concurrency: int | None = None) -> None:
        self.latency, self.concurrency = latency, concurrency
        # The judge's requests in flight (GRADER_CONCURRENCY); C unless told otherwise.
        self.client_concurrency = client_concurrency or concurrency
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--fake-server",
             "--latency", str(latency), "--server-concurrency", str(concurrency)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        readable, _, _ = select.select([self.process.stdout], [], [], 30.0)
        line = self.process.stdout.readline() if readable else ""
        if not line.startswith(READY_PREFIX):
            self.stop()
            raise RuntimeError(f"the fake judge did not start: {line!r}")
        self.port = int(line[len(READY_PREFIX):])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def ideal(self) -> float:
        """Judgments per second when every slot is always busy."""
        return self.concurrency / self.latency

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as r:
            return dict(json.load(r))

    def calls(self) -> int:
        return int(self.stats()["total"])

    def stop(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


# --- synthetic campaign content ------------------------------------------------------

ADJECTIVES = ("Silent", "Crimson", "Hidden", "Golden", "Broken", "Distant", "Frozen",
              "Burning", "Velvet", "Hollow", "Iron", "Lonely", "Midnight", "Painted",
              "Restless", "Scarlet", "Secret", "Shattered", "Silver", "Wandering")
NOUNS = ("Harbor", "Empire", "Garden", "Mirror", "River", "Kingdom", "Letter", "Orchard",
         "Station", "Voyage", "Horizon", "Lantern", "Promise", "Shadow", "Summer", "Tide",
         "Valley", "Winter", "Bridge", "Crown")
FIRST = ("Anna", "Brian", "Chiara", "Daniel", "Emiko", "Farid", "Grace", "Hiroshi", "Ines",
         "Jonas", "Keiko", "Liam", "Maya", "Nikolai", "Olivia", "Pedro", "Rosa", "Samuel",
         "Tomoko", "Victor")
LAST = ("Abe", "Bennett", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hayashi",
        "Ivanov", "Jensen", "Kowalski", "Lopez", "Moreau", "Nakamura", "Okafor", "Petrov",
        "Quinn", "Rossi", "Suzuki", "Thompson")
STUDIOS = ("Northlight Pictures", "Blue Crane Films", "Meridian Studios", "Red Lantern Works",
           "Harborview Entertainment", "Sakura Gate Films", "Atlas Motion", "Ember Road")
CITIES = ("Lisbon", "Osaka", "Montreal", "Prague", "Cape Town", "Reykjavik", "Seville",
          "Hanoi", "Glasgow", "Valparaiso", "Kyoto", "Tallinn")
GENRES = ("drama", "thriller", "comedy", "science fiction", "war", "musical", "mystery")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
FILLER = (
    "Critics praised its cinematography and the restraint of its performances.",
    "The screenplay went through several drafts before filming began.",
    "Its opening weekend was stronger than the studio had expected.",
    "A restored version was released on home video a decade later.",
    "The film was nominated for awards in several categories.",
    "Some reviewers found the second half slower than the first.",
    "The production faced delays because of bad weather on location.",
    "Its soundtrack album reached the charts in several countries.",
)


@dataclass(frozen=True)
class Film:
    """The facts of one synthetic passage (one per question and PassageRank)."""

    title: str
    year: int
    genre: str
    director: str
    actors: tuple[str, str]
    composer: str
    studio: str
    city: str
    month: str
    day: int


def _person(index: int, role: int) -> str:
    return f"{FIRST[(index * 7 + role * 3) % len(FIRST)]} {LAST[(index * 11 + role) % len(LAST)]}"


def film(index: int) -> Film:
    """A distinct film per index: (adjective, noun, part) is a bijection of the index."""
    combos = len(ADJECTIVES) * len(NOUNS)
    adjective, noun = ADJECTIVES[index % len(ADJECTIVES)], NOUNS[index % combos // len(ADJECTIVES)]
    part = index // combos + 1
    title = f"The {adjective} {noun}" + (f" Part {part}" if part > 1 else "")
    return Film(title=title, year=1950 + index * 13 % 74, genre=GENRES[index % len(GENRES)],
                director=_person(index, 0), actors=(_person(index, 1), _person(index, 2)),
                composer=_person(index, 3), studio=STUDIOS[index * 5 % len(STUDIOS)],
                city=CITIES[index * 7 % len(CITIES)], month=MONTHS[index * 5 % 12],
                day=1 + index * 17 % 28)


def passage_text(index: int, words: int) -> str:
    f = film(index)
    sentences = [
        f"{f.title} is a {f.year} {f.genre} film directed by {f.director}.",
        f"It stars {f.actors[0]} and {f.actors[1]}, with music by {f.composer}.",
        f"The film was produced by {f.studio} and shot in {f.city}.",
        f"It premiered on {f.month} {f.day}, {f.year}.",
    ]
    filler = 0
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(FILLER[(index + filler) % len(FILLER)])
        filler += 1
    return " ".join(sentences)


def nugget_text(index: int, variant: int) -> tuple[str, bool]:
    """(nugget, whether the passage entails it): one fact of the film, or a wrong one.

    Each variant (one per AC run) states another fact, so nuggets stay distinct across
    runs; about one in four is altered so that the passage does not entail it.
    """
    f = film(index)
    wrong = (index * 3 + variant) % 4 == 3
    other = film(index + 97)
    facts = (
        f"{f.title} ({f.year}) was directed by {(other if wrong else f).director}.",
        f"{(other if wrong else f).actors[0]} starred in {f.title}.",
        f"{f.title} was shot in {(other if wrong and other.city != f.city else f).city}.",
        f"The music of {f.title} was written by {(other if wrong else f).composer}.",
        f"{f.title} premiered on {f.month} {f.day + 1 if wrong else f.day}, {f.year}.",
        f"{f.title} was produced by "
        f"{(other if wrong and other.studio != f.studio else f).studio}.",
    )
    text = facts[(index + variant) % len(facts)]
    if variant >= len(facts):
        text = text[:-1] + f", as source {variant} reports."
    entailed = not wrong or (text == facts[2] and other.city == f.city) or (
        text == facts[5] and other.studio == f.studio)
    return text, entailed


def film_index(q: int, rank: int) -> int:
    return (q - 1) * MAX_NUGGETS + rank - 1


def question_text(q: int) -> str:
    return f"Who directed the film {film(film_index(q, 1)).title}, and who starred in it?"


def answer_text(q: int, variant: int) -> str:
    f = film(film_index(q, 1))
    return f.director if (q + variant) % 3 else film(film_index(q, 1) + 97).director


def write_pr_run(path: Path, *, questions: int, nuggets: int, words: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(1, questions + 1):
            for rank in range(1, nuggets + 1):
                index = film_index(q, rank)
                out.write(f"Q{q:04d};{rank};doc{index};{passage_text(index, words)}\n")


def write_ac_run(path: Path, *, questions: int, nuggets: int, variant: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(1, questions + 1):
            out.write(f"<Q{q:04d}>\n{answer_text(q, variant)};{q * 37 % 101}\n")
            for n in range(1, nuggets + 1):
                text, _ = nugget_text(film_index(q, n), variant)
                out.write(f"{n};{PR_RUN};{n};{text}\n")
            out.write(f"</Q{q:04d}>\n")


# --- measuring -------------------------------------------------------------------------

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


def probe_server(server: FakeServer, requests: int, passage_words: int) -> None:
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
    instant = FakeServer(0.0, server.concurrency)
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


def grade(run: Run, server: FakeServer, batch: int) -> Graded:
    from grading.services import run_grade

    judge = TimedJudge(make_judge(server.base_url, server.client_concurrency))
    started, cpu = time.perf_counter(), time.process_time()
    report = run_grade(run=run, judge=judge, batch=batch)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if judge.inner.errors:
        print(f"  judge errors: {judge.inner.errors[:3]}")
    return Graded(report, elapsed, cpu, judge)


# --- the campaign ------------------------------------------------------------------------

def make_campaign(questions: int) -> str:
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.utils import timezone

    from campaign.models import Campaign, Membership, Question, Role, Team, Track

    now = timezone.now()
    campaign = Campaign.objects.create(
        slug=f"bench-grading-{os.getpid()}", title="bench grading",
        topics_release=now - timedelta(days=2), pr_due=now - timedelta(days=1),
        ac_due=now + timedelta(days=1))
    Question.objects.bulk_create(
        Question(campaign=campaign, qid=f"Q{q:04d}", text=question_text(q), position=q)
        for q in range(1, questions + 1))
    for slug in ("pr", "ac"):
        Track.objects.create(campaign=campaign, slug=slug, kind=slug)
    Team.objects.create(campaign=campaign, name="BENCH")
    user, _ = User.objects.get_or_create(username="bench-grading-organiser")
    Membership.objects.create(campaign=campaign, user=user, role=Role.ORGANISER)
    return campaign.slug


def submit(slug: str, track_slug: str, name: str, path: Path) -> Run:
    from django.contrib.auth.models import User

    from campaign.models import Team, Track
    from submissions.models import RunStatus
    from submissions.services import run_submit

    track = Track.objects.select_related("campaign").get(campaign__slug=slug, slug=track_slug)
    Team.objects.get_or_create(campaign=track.campaign, name=name.split("-", 1)[0])
    user = User.objects.get(username="bench-grading-organiser")
    started = time.perf_counter()
    with path.open("rb") as file:
        run = run_submit(track=track, user=user, name=name, file=file,
                         size=path.stat().st_size, filename=name)
    assert run.status == RunStatus.VALID, run.validation_report[:3]
    print(f"  submitted {name}: {run.records:,} records in {time.perf_counter() - started:.2f} s")
    return run


def delete_campaign(slug: str) -> None:
    from campaign.models import Campaign
    from grading.models import Judgment
    from submissions.models import Run

    Run.objects.filter(track__campaign__slug=slug).delete()
    Judgment.objects.filter(campaign__slug=slug).delete()
    Campaign.objects.filter(slug=slug).delete()


def bench_fake_judge(args: argparse.Namespace, work: Path) -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    server = FakeServer(args.latency, args.server_concurrency, args.client_concurrency)
    slug = make_campaign(args.questions)
    try:
        print(f"fake judge at {server.base_url}: latency {args.latency * 1000:.0f} ms, "
              f"C = {args.server_concurrency} slots; ideal C / latency = {server.ideal:.0f} "
              f"judgments/s; judge client concurrency {server.client_concurrency}")
        print("what each part can sustain alone:")
        probe_server(server, args.probe_requests, args.passage_words)

        print(f"campaign: {args.questions} questions x {args.nuggets} nuggets per AC run, "
              f"one AC run of distinct nuggets per batch size")
        pr_path = work / PR_RUN
        write_pr_run(pr_path, questions=args.questions, nuggets=args.nuggets,
                     words=args.passage_words)
        submit(slug, "pr", PR_RUN, pr_path)
        runs: list[tuple[Run, Path]] = []
        for variant, _ in enumerate(args.batches):
            path = work / f"T{variant}-AC-1"
            write_ac_run(path, questions=args.questions, nuggets=args.nuggets, variant=variant)
            runs.append((submit(slug, "ac", path.name, path), path))

        print("grading with run_grade (first grading: every nugget is new):")
        for (run, _), batch in zip(runs, args.batches, strict=True):
            _first_grading(run, server, batch)

        print("second grading of the same campaign:")
        _second_grading(slug, runs, server, max(args.batches), work)
        stats = server.stats()
        print(f"fake server over the whole benchmark: {stats['total']:,} calls "
              f"({stats['calls']}), at most {stats['max_in_flight']} in flight, "
              f"at most {stats['max_waiting']} waiting for a slot")
    finally:
        server.stop()
        if os.environ.get("DATABASE_URL"):
            delete_campaign(slug)


def _first_grading(run: Run, server: FakeServer, batch: int) -> None:
    before = server.stats()
    graded = grade(run, server, batch)
    after = server.stats()
    report, elapsed, judge = graded.report, graded.elapsed, graded.judge
    received = after["total"] - before["total"]
    made = report.entailment_calls + report.answer_calls
    rate = made / elapsed
    outside = elapsed - judge.seconds
    outside_cpu = graded.cpu_seconds - judge.cpu_seconds
    server_cpu = after["cpu_seconds"] - before["cpu_seconds"]
    ideal_inside = sum(-(-n // server.concurrency) for n in _batch_sizes(report, batch)) \
        * server.latency
    print(f"  {run.name}, batch={batch}: {made:,} judgments made "
          f"({report.entailment_calls:,} entailment + {report.answer_calls:,} answer; "
          f"server received {received:,}; needs review {report.needs_review})")
    print(f"    elapsed {elapsed:.2f} s = {rate:.1f} judgments/s; ideal {server.ideal:.0f}/s; "
          f"ratio {rate / server.ideal:.3f} (target >= 0.9)")
    print(f"    inside judge_many: {judge.seconds:.2f} s in {judge.batches} batches "
          f"({made / judge.seconds:.1f}/s = {made / judge.seconds / server.ideal:.3f} of ideal; "
          f"lock-step minimum for these batches {ideal_inside:.2f} s); "
          f"outside (hashing, queries, inserts, links): {outside:.2f} s "
          f"= {outside / elapsed:.1%} of elapsed")
    print(f"    CPU: judge client {judge.cpu_seconds / made * 1000:.2f} ms per call "
          f"({judge.cpu_seconds / judge.seconds:.0%} of a core while in judge_many), "
          f"pipeline outside judge_many {outside_cpu / made * 1000:.2f} ms per judgment, "
          f"fake server {server_cpu / max(1, received) * 1000:.2f} ms per call")
    # One process on one idle core: the judge calls take at least their lock-step time
    # and at least the client's CPU; the pipeline's own work runs between batches.
    bound = made / (max(ideal_inside, judge.cpu_seconds) + outside_cpu)
    print(f"    ceiling from these CPU costs with a whole core for this process: "
          f"{bound:.0f} judgments/s = {bound / server.ideal:.3f} of ideal")


def _batch_sizes(report: GradeReport, batch: int) -> Iterator[int]:
    for calls in (report.entailment_calls, report.answer_calls):
        full, rest = divmod(calls, batch)
        yield from [batch] * full
        if rest:
            yield rest


def _second_grading(slug: str, runs: list[tuple[Run, Path]], server: FakeServer, batch: int,
                    work: Path) -> None:
    before = server.calls()
    made = 0
    started = time.perf_counter()
    for run, _ in runs:
        report = grade(run, server, batch).report
        made += report.entailment_calls + report.answer_calls
    elapsed = time.perf_counter() - started
    print(f"  the same {len(runs)} AC run(s) again: {made} judge calls made, "
          f"{server.calls() - before} LLM calls received by the server (target 0), "
          f"{elapsed:.2f} s")

    first, first_path = runs[0]
    copy = work / "DUP-AC-1"
    shutil.copyfile(first_path, copy)
    duplicate = submit(slug, "ac", copy.name, copy)
    before = server.calls()
    graded = grade(duplicate, server, batch)
    report, elapsed = graded.report, graded.elapsed
    print(f"  {duplicate.name}, identical content to {first.name} "
          f"({report.nuggets:,} nuggets, {report.answers_judged:,} answers): "
          f"{report.entailment_calls + report.answer_calls} judge calls made, "
          f"{server.calls() - before} LLM calls received by the server (target 0), "
          f"{elapsed:.2f} s")


# --- the embedded judge -----------------------------------------------------------------

def bench_embedded(args: argparse.Namespace) -> None:
    from grading.embedded.models import MODELS
    from grading.embedded.server import EmbeddedJudge, ServerOptions
    from grading.judge import AnswerInput, EntailmentInput

    var_dir = REPO / "var"
    sample = args.embedded_sample
    entailment_inputs: list[JudgeInput] = []
    truth = []
    for i in range(sample + 1):  # the last one warms the server up, uncounted
        index = film_index(1 + i // args.nuggets, 1 + i % args.nuggets)
        text, entailed = nugget_text(index, 0)
        entailment_inputs.append(EntailmentInput(passage=passage_text(index, args.passage_words),
                                                 nugget=text))
        truth.append(entailed)
    answer_inputs: list[JudgeInput] = [
        AnswerInput(question=question_text(q), answer=answer_text(q, 0), nuggets=tuple(
            (n, nugget_text(film_index(q, n), 0)[0]) for n in range(1, args.nuggets + 1)
            if nugget_text(film_index(q, n), 0)[1]))
        for q in range(1, args.embedded_answers + 1)
    ]
    for name in args.embedded_model:
        model = MODELS[name]
        path = model.path(var_dir)
        if path.exists() and path.stat().st_size == model.size:
            print(f"embedded judge {name}: model cached at {path}")
        else:
            print(f"embedded judge {name}: not cached at {path}; downloading "
                  f"{model.size / 1e9:.2f} GB of part wheels from PyPI (once)", flush=True)
        started = time.perf_counter()
        options = ServerOptions(n_parallel=args.embedded_concurrency)
        with EmbeddedJudge(name, var_dir=var_dir, options=options) as server:
            print(f"  ready in {time.perf_counter() - started:.1f} s at {server.base_url}, "
                  f"{options.n_parallel} parallel slots, {os.cpu_count()} CPUs")
            judge = make_judge(server.base_url, args.embedded_concurrency, model=server.model,
                               timeout=900.0)
            warm = time.perf_counter()
            judge.judge_many(entailment_inputs[-1:])
            print(f"  warm-up (one entailment, not counted): {time.perf_counter() - warm:.1f} s; "
                  f"load average now {os.getloadavg()[0]:.2f}")
            outcomes = _embedded_sample(judge, "entailment", entailment_inputs[:-1],
                                        args.embedded_concurrency)
            labels = [o.label["entailed"] if not isinstance(o, Exception) and o.label else None
                      for o in outcomes]
            agree = sum(label == want for label, want in zip(labels, truth, strict=False))
            print(f"    labels agreeing with the synthetic truth: {agree}/{len(labels)}")
            if answer_inputs:
                _embedded_sample(judge, "answer", answer_inputs, args.embedded_concurrency)


def _embedded_sample(judge: OpenAIJudge, kind: str, inputs: Sequence[JudgeInput],
                     concurrency: int) -> list[JudgeOutcome | JudgeError]:
    started = time.perf_counter()
    outcomes = judge.judge_many(inputs)
    elapsed = time.perf_counter() - started
    done = [o for o in outcomes if not isinstance(o, Exception)]
    review = sum(1 for o in done if o.needs_review)
    latency = sum(o.latency_seconds for o in done) / max(1, len(done))
    prompt = sum(o.prompt_tokens or 0 for o in done) / max(1, len(done))
    completion = sum(o.completion_tokens or 0 for o in done) / max(1, len(done))
    print(f"  {len(inputs)} {kind} judgments at concurrency {concurrency}: {elapsed:.1f} s = "
          f"{len(inputs) / elapsed:.3f} judgments/s, {elapsed / len(inputs):.2f} s per "
          f"judgment (mean call latency {latency:.1f} s; tokens per call {prompt:.0f} prompt "
          f"+ {completion:.0f} completion; failed {len(inputs) - len(done)}, "
          f"needs review {review})")
    return outcomes


# --- command line -------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--nuggets", type=int, default=MAX_NUGGETS, choices=range(1, 11),
                        metavar="1..10", help="nuggets per question (default 10)")
    parser.add_argument("--passage-words", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the fake judge takes per request (default 0.05)")
    parser.add_argument("--server-concurrency", type=int, default=16,
                        help="requests the fake judge serves at once, C (default 16)")
    parser.add_argument("--client-concurrency", type=int, default=None,
                        help="the judge's requests in flight, GRADER_CONCURRENCY (default "
                             "C: the server's parallel slots)")
    parser.add_argument("--batches", default="256,1024,8192",
                        help="run_grade batch sizes to measure, comma-separated; one AC run "
                             "each (default 256,1024,8192: the service default, 64 x C, "
                             "and each step in one batch)")
    parser.add_argument("--probe-requests", type=int, default=2000,
                        help="calls for the server-alone and client-alone probes")
    parser.add_argument("--fake-judge", action=argparse.BooleanOptionalAction, default=True,
                        help="measure the pipeline against the fake judge (default on)")
    parser.add_argument("--embedded", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure the embedded llama.cpp judge (default on)")
    parser.add_argument("--embedded-model", action="append", default=None,
                        help="packaged model(s) to measure (default qwen2.5-coder-1.5b; "
                             "repeat for more, e.g. qwen2.5-coder-0.5b)")
    parser.add_argument("--embedded-sample", type=int, default=24,
                        help="distinct nuggets judged by the embedded judge (default 24)")
    parser.add_argument("--embedded-answers", type=int, default=4,
                        help="answer evaluations by the embedded judge (default 4)")
    parser.add_argument("--embedded-concurrency", type=int, default=4)
    parser.add_argument("--http-logs", action="store_true",
                        help="keep the judge client's per-request INFO log lines (the "
                             "settings' logging), which cost CPU on every call")
    parser.add_argument("--fake-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fake_server:
        asyncio.run(_serve(args.latency, args.server_concurrency))
        return
    args.batches = [int(b) for b in args.batches.split(",") if b.strip()]
    args.embedded_model = args.embedded_model or ["qwen2.5-coder-1.5b"]
    if args.questions > 9999:
        parser.error("--questions must be at most 9999 (qIDs are Q0001..Q9999)")

    work = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    os.environ.setdefault("VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    if not args.http_logs:
        # The settings log every HTTP request the judge client makes at INFO (one line
        # per judge call, ~10% of the client's CPU here); quiet them unless asked.
        for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
            logging.getLogger(name).setLevel(logging.WARNING)
    try:
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} before starting")
        if args.fake_judge:
            bench_fake_judge(args, work)
            print(f"load average after the fake-judge part: {os.getloadavg()[0]:.2f}")
        if args.embedded:
            bench_embedded(args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
