"""Benchmark: the packaged judges on the labelled dev set, prompts v1 against v2 (issue 12).

For each packaged model (Qwen2.5-Coder-1.5B and -0.5B by default) it starts the
embedded llama.cpp server once and, side by side in this one run, judges the dev set
(grading/validation/dev.jsonl) with
- v1: the one-call prompts of grading/llm/prompts.py (reason first for answers, a
  reason per nugget), as graded before issue 12;
- v2: the divided subtasks of grading/llm/subtasks.py through `OpenAIJudge` (the gold
  rule first, verdict-only yes/no calls, relevance only for correct answers), measured
  by grading/validation/runner.py as `judge_eval` does.
It prints per model, version and pass: accuracy, Cohen's kappa, precision/recall of
"bogus", the exact relevant-set rate, judgments/s and tokens per judgment, then the
v2/v1 speed ratios. Targets for the 1.5B on 2 cores: >= 2 entailment and >= 0.5 answer
judgments/s; >= 0.95 entailment and gold-answer accuracy, >= 0.85 without gold,
>= 0.75 exact relevant sets.

Run: .venv/bin/python bench/bench_judge.py [--models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b]
     [--versions v1,v2] [--set FILE] [--limit N] [--parallel 2] [--threads N]
`--limit N` takes the first N items of each kind (a quick look; figures are noisier).
Models come from <repo>/var/models (installed from PyPI on first use). The machine's
other load shows in the speeds (the load average is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grading.embedded.server import EmbeddedJudge, ServerOptions  # noqa: E402
from grading.judge import OpenAIJudge  # noqa: E402
from grading.llm.client import JudgeCall, JudgeClient, JudgeConfig  # noqa: E402
from grading.llm.inputs import answer_request, entailment_request  # noqa: E402
from grading.llm.parsing import AnswerLabel, EntailmentLabel  # noqa: E402
from grading.llm.prompts import AnswerCheck  # noqa: E402
from grading.validation.figures import Pair, agreement  # noqa: E402
from grading.validation.labelled import (  # noqa: E402
    DEV_SET,
    AnswerItem,
    LabelledSet,
    read_labelled_set,
)
from grading.validation.runner import PASSES, validate_judge  # noqa: E402


def _limited(labelled: LabelledSet, limit: int | None) -> LabelledSet:
    if limit is None:
        return labelled
    items = tuple(labelled.entailment[:limit]) + tuple(labelled.answers[:limit])
    return LabelledSet(name=labelled.name, sha256=labelled.sha256, items=items)


def _speed(calls: Sequence[Any], seconds: float) -> dict[str, Any]:
    done = [c for c in calls if isinstance(c, JudgeCall)]
    tokens = [(c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in done]
    return {"judgments_per_second": len(calls) / seconds,
            "tokens_per_judgment": sum(tokens) / len(tokens) if tokens else None}


async def _v1(config: JudgeConfig, labelled: LabelledSet) -> dict[str, dict[str, Any]]:
    """The v1 prompts over the set: one call per item, as grading made them before."""
    figures: dict[str, dict[str, Any]] = {}
    async with JudgeClient(config) as client:
        items = labelled.entailment
        started = time.perf_counter()
        calls = await client.judge_all(
            [entailment_request(passage=i.passage, nugget=i.nugget) for i in items])
        seconds = time.perf_counter() - started
        pairs: list[Pair] = [(i.entailed, c.label.entailed if isinstance(c, JudgeCall)
                              and isinstance(c.label, EntailmentLabel) else None)
                             for i, c in zip(items, calls, strict=True)]
        figures["entailment"] = {**agreement(pairs).as_json(bogus=True),
                                 **_speed(calls, seconds)}
        for section, check in (("answer_gold", AnswerCheck.GOLD),
                               ("answer_nuggets", AnswerCheck.NUGGETS)):
            answers: list[AnswerItem] = labelled.answers
            started = time.perf_counter()
            answer_calls = await client.judge_all([answer_request(
                question=i.question, answer=i.answer, nuggets=dict(i.nuggets),
                answer_check=check,
                gold_answers=i.gold_answers if check == AnswerCheck.GOLD else ()) for i in answers])
            seconds = time.perf_counter() - started
            labels = [c.label if isinstance(c, JudgeCall) and isinstance(c.label, AnswerLabel)
                      else None for c in answer_calls]
            pairs = [(i.correct, None if label is None else label.correct)
                     for i, label in zip(answers, labels, strict=True)]
            sets = [(i, label) for i, label in zip(answers, labels, strict=True)
                    if i.correct and i.nuggets]
            exact = sum(1 for i, label in sets if label is not None and label.correct
                        and label.relevant == i.relevant)
            figures[section] = {**agreement(pairs).as_json(),
                                "exact_relevant_set": exact / len(sets) if sets else None,
                                **_speed(answer_calls, seconds)}
    return figures


def _row(model: str, version: str, section: str, figures: dict[str, Any]) -> str:
    def number(key: str, digits: int = 3) -> str:
        value = figures.get(key)
        return f"{value:.{digits}f}" if isinstance(value, float | int) else "-"

    return (f"{model:<20} {version:<3} {section:<15} {figures.get('items', '-')!s:>5} "
            f"{number('accuracy'):>6} {number('kappa'):>6} {number('bogus_precision'):>6} "
            f"{number('bogus_recall'):>6} {number('exact_relevant_set'):>6} "
            f"{number('judgments_per_second', 2):>6} {number('tokens_per_judgment', 0):>6}")


HEADER = (f"{'model':<20} {'ver':<3} {'pass':<15} {'items':>5} {'acc':>6} {'kappa':>6} "
          f"{'bogP':>6} {'bogR':>6} {'exRel':>6} {'j/s':>6} {'tok/j':>6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="qwen2.5-coder-1.5b,qwen2.5-coder-0.5b")
    parser.add_argument("--versions", default="v1,v2")
    parser.add_argument("--set", type=Path, default=DEV_SET)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--parallel", type=int, default=ServerOptions.n_parallel)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    labelled = _limited(read_labelled_set(args.set), args.limit)
    print(f"set {labelled.name} (sha256 {labelled.sha256[:12]}): "
          f"{len(labelled.entailment)} entailment, {len(labelled.answers)} answer items; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}", flush=True)
    results: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for model in args.models.split(","):
        options = ServerOptions(n_parallel=args.parallel, threads=args.threads)
        with EmbeddedJudge(model, var_dir=ROOT / "var", options=options) as server:
            config = JudgeConfig(base_url=server.base_url, model=server.model,
                                 concurrency=args.parallel, timeout=900.0)
            for version in args.versions.split(","):
                if version == "v1":
                    figures = asyncio.run(_v1(config, labelled))
                else:
                    figures = validate_judge(OpenAIJudge(config), labelled).figures
                results[(model, version)] = figures
                for section in PASSES:
                    if section in figures:
                        print(_row(model, version, section, figures[section]), flush=True)
    print()
    print(HEADER)
    for (model, version), figures in results.items():
        for section in PASSES:
            if section in figures:
                print(_row(model, version, section, figures[section]))
    for model in args.models.split(","):
        before, after = results.get((model, "v1")), results.get((model, "v2"))
        if before and after:
            for section in PASSES:
                old = before.get(section, {}).get("judgments_per_second")
                new = after.get(section, {}).get("judgments_per_second")
                if old and new:
                    print(f"{model} {section}: v2/v1 speed {new / old:.2f}x")


if __name__ == "__main__":
    main()
