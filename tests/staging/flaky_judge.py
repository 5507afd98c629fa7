"""A flaky OpenAI-compatible judge: deterministic verdicts, and faults on a fifth of calls.

A responder for the tests' scripted server (tests/grading/scripted_server), so it is real
HTTP on 127.0.0.1, bounded, and stops with the test. Each verdict is a hash of the
prompt (the same input gets the same verdict from any worker, in any order, in the
faulty scenario and in the clean reference), sent with token logprobs that make the
judge sure of it (no resampling, nothing doubtful to review).

Faults: each call's fate is a hash of a seed, its prompt and how many times that prompt
was asked before; one in five calls gets a 500, a 429, a timeout (the answer comes after
the client's GRADER_TIMEOUT), a reply that is not JSON, or a body cut off mid-JSON. A
prompt meets at most MAX_FAULTS_PER_PROMPT of them, fewer than the client's retries
(JudgeConfig: 5 transient retries, 3 replies to parse), so every call gets its verdict
in the end and no run fails for the judge: what the scenario checks is that the faults
cost nothing but time. `injected` counts what was served, by kind.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass, field

from tests.grading.scripted_server import ChatRequest, RawBody, Reply, Status, Step
from tests.grading.scripted_server.replies import verdict_logprobs

FAULT_KINDS = ("500", "429", "timeout", "not-json-reply", "truncated-body")
MAX_FAULTS_PER_PROMPT = 2
SURE = 0.99
REASON = "flaky judge: decided by the prompt's hash"


def _fraction(*parts: str) -> float:
    """A number in [0, 1) fixed by `parts`."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def verdict_of(request: ChatRequest) -> bool:
    """The judge's verdict on a prompt: true three times in four."""
    return _fraction("verdict", request.schema_name, request.user) >= 0.25


@dataclass(kw_only=True)
class FlakyJudge:
    """The responder. `fault_rate` 0 gives the clean judge of the reference."""

    seed: str = "staging"
    fault_rate: float = 0.2
    # Longer than the workers' GRADER_TIMEOUT: the client gives up first.
    timeout_after: float = 3.0
    injected: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    verdicts: int = 0  # calls answered with a verdict
    _asked: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: ChatRequest) -> Step:
        prompt = f"{request.schema_name}\x1f{request.user}\x1f{request.temperature}"
        with self._lock:
            self.calls += 1
            asked_before = self._asked[prompt]
            self._asked[prompt] += 1
            fault = None
            if asked_before < MAX_FAULTS_PER_PROMPT:
                chance = _fraction(self.seed, prompt, str(asked_before))
                if chance < self.fault_rate:
                    fault = FAULT_KINDS[int(chance / self.fault_rate * len(FAULT_KINDS))]
                    self.injected[fault] += 1
            if fault is None:
                self.verdicts += 1
        if fault is not None:
            return self._fault(fault)
        return self._verdict(request)

    def _fault(self, fault: str) -> Step:
        if fault == "500":
            return Status(500, "flaky judge: internal error")
        if fault == "429":
            return Status(429, "flaky judge: too many requests", retry_after=0.2)
        if fault == "timeout":
            return Reply(json.dumps(True), latency=self.timeout_after)
        if fault == "not-json-reply":
            return Reply("Sure! The answer is: {true")
        return RawBody(b'{"id": "chatcmpl-flaky", "choices": [{"index": 0, "mess')

    def _verdict(self, request: ChatRequest) -> Step:
        subtask = request.schema_name.removeprefix("r2c2_")
        if subtask in ("entailed", "correct", "relevant"):
            verdict = verdict_of(request)
            logprobs = verdict_logprobs(verdict, SURE) if request.logprobs else None
            return Reply(json.dumps(verdict), logprobs=logprobs)
        if subtask.endswith("_reason"):
            field_name = subtask.removesuffix("_reason")
            fixed = request.schema["properties"][field_name]["enum"][0]
            return Reply(json.dumps({field_name: fixed, "reason": REASON}))
        return Status(400, f"flaky judge: no reply for the schema {request.schema_name!r}")

    def summary(self) -> str:
        faults = sum(self.injected.values())
        share = faults / self.calls if self.calls else 0.0
        kinds = ", ".join(f"{kind} {self.injected[kind]}" for kind in FAULT_KINDS)
        return (f"judge calls {self.calls}, verdicts {self.verdicts}, faults injected "
                f"{faults} ({share:.1%}): {kinds}")
