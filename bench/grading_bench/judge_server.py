"""The benchmark's judge: the tests' scripted server with a hashing responder, in a child.

`HashedJudge` answers every R2C2 judge call validly and deterministically: a hash of the
prompt decides each verdict (no text is parsed), with the verdict token's logprobs where
the client asks for them (as vLLM and llama.cpp send them: the judge then needs no
resampled replies to measure its doubt), and every reply takes `latency` seconds
inside one of the server's C slots (`ScriptedServer(slots=C)`; more requests wait for a
slot), so its ideal throughput is C / latency. It runs in a child process (its own GIL,
its own core), started by `JudgeProcess` as `bench/bench_grading.py --fake-server`; it
says its port on stdout and serves until its stdin closes. GET /stats gives its counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import select
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any, Self

from tests.grading.scripted_server import ChatRequest, Reply, ScriptedServer, Status, Traffic
from tests.grading.scripted_server.replies import verdict_logprobs

READY_PREFIX = "FAKE-JUDGE-READY "
ENTRY = Path(__file__).resolve().parent.parent / "bench_grading.py"
REASON = "fake judge: decided by the prompt's hash"
#: The judge's probability for each verdict: sure, above any review threshold.
SURE = 0.99


def hashed_label(request: ChatRequest) -> tuple[str, Any] | None:
    """(kind, reply JSON) for a judge call, or None for a schema it does not know.

    The kind is the reply schema's name: the v2 subtasks ("r2c2_entailed",
    "r2c2_correct", "r2c2_relevant", grading/llm/subtasks.py) get a bare true/false,
    their "_reason" forms the verdict fixed by the schema and a reason, and the v1
    entailment judgment ("r2c2_entailment", the probe's request) its object.
    """
    digest = hashlib.sha256(request.user.encode("utf-8")).digest()
    verdict = digest[0] % 4 != 0
    subtask = request.schema_name.removeprefix("r2c2_")
    if subtask in ("entailed", "correct", "relevant"):
        return subtask, verdict
    if subtask.endswith("_reason"):
        field = subtask.removesuffix("_reason")
        with contextlib.suppress(KeyError, IndexError, TypeError):
            return subtask, {field: request.schema["properties"][field]["enum"][0],
                             "reason": REASON}
        return None
    if subtask == "entailment":
        return "entailment", {"reason": REASON, "entailed": verdict}
    return None


class HashedJudge:
    """The responder: hashed verdicts after `latency` seconds, counted by kind."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply | Status:
        labelled = hashed_label(request)
        if labelled is None:
            return Status(400, f"no hashed reply for the schema {request.schema_name!r}")
        kind, label = labelled
        with self._lock:
            self.calls[kind] += 1
        logprobs = (verdict_logprobs(label, SURE) if request.logprobs and isinstance(label, bool)
                    else None)
        return Reply(json.dumps(label), logprobs=logprobs, latency=self.latency)

    def stats(self, traffic: Traffic) -> dict[str, Any]:
        with self._lock:
            calls = dict(self.calls)
        return {"calls": calls, "total": sum(calls.values()),
                "max_in_flight": traffic.max_in_flight, "max_waiting": traffic.max_waiting,
                "cpu_seconds": time.process_time()}


def serve(latency: float, concurrency: int) -> None:
    """The child's life: serve until stdin closes (the parent closed it or died)."""
    judge = HashedJudge(latency)
    server = ScriptedServer(judge, slots=concurrency, keep_requests=False)
    server.pages["/stats"] = lambda: judge.stats(server.traffic)
    with server:
        print(f"{READY_PREFIX}{server.port}", flush=True)
        while sys.stdin.readline():
            pass


class ChildJudge:
    """A benchmark's fake judge in a child process, started as `ENTRY --fake-server ARGS`.

    The child says ``READY_PREFIX PORT`` on stdout once it serves and stops when its
    stdin closes; GET /stats gives the requests it answered. A context manager.
    """

    def __init__(self, entry: Path, args: list[str], ready_prefix: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(entry), "--fake-server", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        readable, _, _ = select.select([self.process.stdout], [], [], 30.0)
        line = self.process.stdout.readline() if readable else ""
        if not line.startswith(ready_prefix):
            self.stop()
            raise RuntimeError(f"the fake judge did not start: {line!r}")
        self.port = int(line[len(ready_prefix):])

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as r:
            return dict(json.load(r))

    def calls(self) -> int:
        """Requests the server has answered so far (every kind)."""
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


class JudgeProcess(ChildJudge):
    """The hashing judge in a child process (`--fake-server` mode of bench_grading.py)."""

    def __init__(self, latency: float, concurrency: int,
                 client_concurrency: int | None = None) -> None:
        self.latency, self.concurrency = latency, concurrency
        # The judge's requests in flight (GRADER_CONCURRENCY); C unless told otherwise.
        self.client_concurrency = client_concurrency or concurrency
        super().__init__(ENTRY, ["--latency", str(latency),
                                 "--server-concurrency", str(concurrency)], READY_PREFIX)

    @property
    def ideal(self) -> float:
        """Judgments per second when every slot is always busy."""
        return self.concurrency / self.latency
