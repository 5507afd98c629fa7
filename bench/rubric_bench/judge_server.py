"""The benchmark's judge: the tests' scripted server with a hashing self-rater, in a child.

`HashedRubric` answers every self-rating request (reply schema `rubric_grade`,
grading/llm/schemas.py) validly and deterministically: a hash of the prompt decides the
grade 0..5 (grade 0 comes with an "unanswerable" answer, as a model says it), and every
reply takes `latency` seconds inside one of the server's `slots` (more requests wait
for a slot), so its ideal throughput is slots / latency. It runs in a child process (its
own GIL, its own core), started by `RubricJudgeProcess` as
`bench/bench_rubric.py --fake-server`; it says its port on stdout and serves until its
stdin closes. GET /stats gives the requests it answered, by schema name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import select
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from grading.llm.schemas import RUBRIC_SCHEMA_NAME
from tests.grading.scripted_server import ChatRequest, Reply, ScriptedServer, Status

READY_PREFIX = "RUBRIC-JUDGE-READY "
ENTRY = Path(__file__).resolve().parent.parent / "bench_rubric.py"


class HashedRubric:
    """The responder: a hashed grade and answer after `latency` seconds, counted."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply | Status:
        with self._lock:
            self.calls[request.schema_name] += 1
        if request.schema_name != RUBRIC_SCHEMA_NAME:
            return Status(400, f"no hashed reply for the schema {request.schema_name!r}")
        digest = hashlib.sha256(request.user.encode("utf-8")).hexdigest()
        grade = int(digest[:2], 16) % 6
        answer = "unanswerable" if grade == 0 else f"answer {digest[:8]}"
        return Reply(json.dumps({"grade": grade, "answer": answer}), latency=self.latency)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            calls = dict(self.calls)
        return {"calls": calls, "total": sum(calls.values())}


def serve(latency: float, slots: int) -> None:
    """The child's life: serve until stdin closes (the parent closed it or died)."""
    judge = HashedRubric(latency)
    server = ScriptedServer(judge, slots=slots, keep_requests=False)
    server.pages["/stats"] = judge.stats
    with server:
        print(f"{READY_PREFIX}{server.port}", flush=True)
        while sys.stdin.readline():
            pass


class RubricJudgeProcess:
    """The hashing self-rater in a child process; a context manager that stops it."""

    def __init__(self, latency: float, slots: int) -> None:
        self.latency, self.slots = latency, slots
        self.process = subprocess.Popen(
            [sys.executable, str(ENTRY), "--fake-server",
             "--latency", str(latency), "--slots", str(slots)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        readable, _, _ = select.select([self.process.stdout], [], [], 30.0)
        line = self.process.stdout.readline() if readable else ""
        if not line.startswith(READY_PREFIX):
            self.stop()
            raise RuntimeError(f"the fake judge did not start: {line!r}")
        self.port = int(line[len(READY_PREFIX):])

    def __enter__(self) -> RubricJudgeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def calls(self) -> int:
        """Requests the server has answered so far (every schema)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as r:
            return int(json.load(r)["total"])

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
