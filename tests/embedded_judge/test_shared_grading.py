"""Grading through the machine's shared judge goes on whatever happens to the process that
started it, or to the server itself (the stand-in of `standin_judge.py` says `true`)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from embedded_judge.shared import find_judge, shared_judge, stop_judge
from grading.judge import EntailmentInput, JudgeOutcome
from grading.llm.calls import JudgeConfig
from grading.openai_judge import OpenAIJudge
from tests.embedded_judge.standin_judge import standin_launch
from tests.embedded_judge.test_shared import (
    IDLE,
    MODEL,
    contender,
    judge_of,
    started,
    still_serving_for,
    wait_gone,
)

# Claims without names or numbers: the names-and-numbers rule leaves them to the judge.
INPUTS = [EntailmentInput(passage="the sky over the city was clear all day",
                          nugget=f"the sky was clear ({word})")
          for word in ("morning", "noon", "evening", "night")]


def judge_through(var_dir: Path, starts: Path) -> OpenAIJudge:
    """A judge client on the shared stand-in, relocating as `grading.setup` makes it."""
    def where() -> str:
        return shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts),
                            idle_seconds=IDLE).base_url

    return OpenAIJudge(JudgeConfig(base_url=where(), model=MODEL, concurrency=2,
                                   doubt_samples=0, backoff_initial=0.05,
                                   relocate=functools.partial(where)))


def labels(outcomes: Sequence[object]) -> list[object]:
    return [o.label if isinstance(o, JudgeOutcome) else o for o in outcomes]


def test_a_grading_goes_on_when_the_process_that_started_the_judge_exits(tmp_path: Path):
    var_dir, starts = tmp_path / "var", tmp_path / "starts"
    starter = contender(var_dir, starts)
    try:
        started_judge = judge_of(starter)
        judge = judge_through(var_dir, starts)
        before = judge.judge_many(INPUTS)
    finally:
        starter.communicate(timeout=30)
    still_serving_for(4 * IDLE, MODEL, var_dir)
    after = judge.judge_many(INPUTS)

    assert labels(before) == labels(after) == [{"entailed": True}] * len(INPUTS)
    assert started(starts) == [started_judge["pid"]]  # one server did it all
    stop_judge(MODEL, var_dir=var_dir)


def test_a_client_whose_server_was_stopped_finds_another_and_goes_on(tmp_path: Path):
    var_dir, starts = tmp_path / "var", tmp_path / "starts"
    judge = judge_through(var_dir, starts)
    before = judge.judge_many(INPUTS)
    first = stop_judge(MODEL, var_dir=var_dir)
    assert first is not None
    wait_gone(first.pid)

    after = judge.judge_many(INPUTS)

    assert labels(before) == labels(after) == [{"entailed": True}] * len(INPUTS)
    second = find_judge(MODEL, var_dir=var_dir)
    assert second is not None and started(starts) == [first.pid, second.pid]
    stop_judge(MODEL, var_dir=var_dir)
