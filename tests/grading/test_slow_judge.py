"""A judge slower than the client's timeout grades a run to the end, as long as its server
shows progress (grading.llm.progress): on a busy machine the embedded judge can take
minutes a call, and that must make grading slow, not failed."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from grading.r2c2.pipeline import run_grade
from submissions.models import Run
from tests.grading.fixtures import make_judge
from tests.grading.scripted_server import (
    ChatRequest,
    Reply,
    ScriptedJudge,
    ScriptedServer,
    Step,
)
from tests.grading.test_pipeline import marked_text
from tests.support import example

pytestmark = pytest.mark.django_db

#: The client's timeout, and how long each reply takes: every call outlasts the timeout.
TIMEOUT = 0.25
SLOWER = 0.6


class Slow:
    """The scripted judge, each of its replies taking SLOWER seconds in a slot."""

    def __init__(self, judge: ScriptedJudge) -> None:
        self.judge = judge

    def __call__(self, request: ChatRequest) -> Step:
        reply = self.judge(request)
        assert isinstance(reply, Reply)
        return dataclasses.replace(reply, latency=SLOWER)


class Working:
    """llama.cpp's decode counter, rising at each read while a request is being served."""

    def __init__(self) -> None:
        self.server: ScriptedServer[Any] | None = None
        self.decoded = 0

    def __call__(self) -> str:
        assert self.server is not None
        with self.server.traffic.lock:
            self.decoded += self.server.traffic.in_flight > 0
        return f"llamacpp:n_decode_total {self.decoded}\n"


def test_a_judge_slower_than_the_timeout_grades_the_run_to_the_end(
    toy_ac_run: Run, script: ScriptedJudge
) -> None:
    counter = Working()
    with ScriptedServer(Slow(script), pages={"/metrics": counter}) as server:
        counter.server = server
        report = run_grade(run=toy_ac_run, judge=make_judge(server, timeout=TIMEOUT,
                                                            max_retries=0))
        requests = [json.dumps(body, sort_keys=True) for body in server.requests]

    assert marked_text(toy_ac_run) == example("WASEDA-AC-1.marked")
    assert report.needs_review == 0
    assert len(set(requests)) == len(requests)  # each call answered once, none given up on
    assert counter.decoded >= 2  # the client did look, and the server was working
