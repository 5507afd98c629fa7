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

import hashlib
import json
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from grading_bench.judge_server import ChildJudge

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


class RubricJudgeProcess(ChildJudge):
    """The hashing self-rater in a child process; a context manager that stops it."""

    def __init__(self, latency: float, slots: int) -> None:
        self.latency, self.slots = latency, slots
        super().__init__(ENTRY, ["--latency", str(latency), "--slots", str(slots)],
                         READY_PREFIX)
