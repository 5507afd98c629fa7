"""Benchmark: the embedded judge's engine, today's setup against the new one, quiet and loaded.

For each packaged model (Qwen2.5-Coder-1.5B, the default judge, and the 0.5B) and each
machine load, side by side in this one run, it starts the embedded llama.cpp server
twice and measures each:
- today: the prebuilt xllamacpp wheel, OpenMP's default wait policy (threads spin
  before they sleep), llama.cpp's default batch (up to 2048 tokens a step);
- new: the build compiled for this machine where `make demo`/`make test` made one
  (embedded_judge/engines.py), passive waiting, 512-token steps.
The judge client and pipeline are the same for both (the names-and-numbers rule first,
calls sharing a prompt start one after another).

Loads, each started before the two setups are measured and stopped after:
- quiet: nothing else (close everything else first: the load average is printed);
- cores: one CPU-bound process per core, both cores kept busy;
- judge: another llama.cpp server (the 0.5B, today's setup) generating nonstop for two
  clients: a second demo or test run on the same machine.

Per measurement: prefill and decode tokens/s of one request (best of 3: a fresh
220-token prompt, and 64 generated tokens, from llama.cpp's own timings), and
judgments/s of three passes over the labelled dev set (grading/validation/dev.jsonl):
entailment (whole passages' claims, so that claims share passages as in a run),
the answer check against gold answers, and the answer check from nuggets (relevance
calls included), each with its accuracy where it finished. A pass or request
still running after `--budget` seconds is stopped: its rate is what it did meanwhile
(marked "~"; a token rate is "-" where no request ended in time). `--setups new,new1`
sets two threads against one; `--setups today,native,passive,new` shows what the native
build and the passive threads each buy alone. Then the table, and the ratios the targets
are set on: each setup against today's, and loaded/quiet per setup (targets on 2
cores, quiet: the 1.5B >= 1.0 entailment and >= 0.4 answer judgments/s; loaded, no
worse than half of its quiet figure).

`--accuracy` measures accuracy instead of speed: the candidate wordings per subtask,
cross-validated on the dev set and scored on a held-out set (bench/judge_accuracy/).

Run: .venv/bin/python bench/bench_judge.py [--models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b]
     [--loads quiet,cores,judge] [--setups today,new] [--entailment 60] [--answers 20]
     [--budget 180]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge_accuracy.cli import main as accuracy_main  # noqa: E402

from embedded_judge.engines import PREBUILT, chosen_engine, system_info  # noqa: E402
from embedded_judge.models import SMALL_MODEL  # noqa: E402
from embedded_judge.options import ServerOptions  # noqa: E402
from embedded_judge.server import EmbeddedJudge  # noqa: E402
from grading.judge import EntailmentInput, JudgeInput, JudgeOutcome  # noqa: E402
from grading.llm.calls import JudgeConfig  # noqa: E402
from grading.openai_judge import OpenAIJudge  # noqa: E402
from grading.validation.labelled import DEV_SET, read_labelled_set  # noqa: E402
from grading.validation.runner import answer_input  # noqa: E402

VAR = ROOT / "var"
LOG = VAR / "logs" / "bench-judge.log"
PASSES = ("entailment", "answer_gold", "answer_nuggets")


@dataclass(frozen=True)
class Setup:
    name: str
    engine: str | None
    options: ServerOptions


SETUPS = {
    "today": Setup("today", PREBUILT, ServerOptions(wait_policy=None, batch=None)),
    "new": Setup("new", None, ServerOptions()),
    # The new setup on one thread: whether fewer threads than cores pay under a load.
    "new1": Setup("new1", None, ServerOptions(threads=1)),
    # Each change alone: the native build with today's threads and steps, and the
    # prebuilt wheel with passive threads and 512-token steps.
    "native": Setup("native", None, ServerOptions(wait_policy=None, batch=None)),
    "passive": Setup("passive", PREBUILT, ServerOptions()),
}


@dataclass
class Figures:
    prefill: float | None = None
    decode: float | None = None
    rates: dict[str, tuple[float, bool]] = field(default_factory=dict)  # (j/s, finished)
    accuracy: dict[str, float] = field(default_factory=dict)
    load: float = 0.0
    steal: float = 0.0
    engine: str = ""


# --- Machine readings -------------------------------------------------------------------

def cpu_times() -> tuple[int, int]:
    """(all, steal) jiffies from /proc/stat: the hypervisor's share shows as steal."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields), fields[7]


@contextlib.contextmanager
def watched(figures: Figures) -> Iterator[None]:
    total, steal = cpu_times()
    try:
        yield
    finally:
        total2, steal2 = cpu_times()
        figures.steal = (steal2 - steal) / max(total2 - total, 1)
        figures.load = os.getloadavg()[0]


# --- Competing loads ----------------------------------------------------------------------

@contextlib.contextmanager
def competing(load: str) -> Iterator[None]:
    if load == "quiet":
        yield
    elif load == "cores":
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 2)]
        try:
            yield
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    elif load == "judge":
        with busy_judge():
            yield
    else:
        raise SystemExit(f"unknown load {load!r}: quiet, cores or judge")


@contextlib.contextmanager
def busy_judge() -> Iterator[None]:
    """A second llama.cpp server, today's setup, generating for two clients nonstop."""
    stop = threading.Event()
    with EmbeddedJudge(SMALL_MODEL, var_dir=VAR, engine=PREBUILT, progress=None,
                       options=ServerOptions(n_parallel=2, wait_policy=None, batch=None),
                       log_path=VAR / "logs" / "bench-busy-judge.log") as server:
        def generate() -> None:
            while not stop.is_set():
                with contextlib.suppress(OSError, urllib.error.URLError):
                    post(server.base_url, {
                        "model": SMALL_MODEL, "max_tokens": 200, "ignore_eos": True,
                        "messages": [{"role": "user", "content":
                                      f"[{random.random()}] Tell a long story."}]}, 600)

        clients = [threading.Thread(target=generate, daemon=True) for _ in range(2)]
        for client in clients:
            client.start()
        try:
            yield
        finally:
            stop.set()


# --- Measurements -------------------------------------------------------------------------

def post(base_url: str, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    request = urllib.request.Request(f"{base_url}/chat/completions",
                                     data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return dict(json.load(response))


WORDS = ["the", "film", "was", "directed", "by", "a", "studio", "released", "in", "theaters",
         "award", "sequel", "cast", "critics", "box", "office", "score", "premiere"]


def tokens_per_second(base_url: str, model: str, budget: float) -> tuple[float | None, ...]:
    """(prefill, decode) tokens/s of one request each, best of 3, from llama.cpp's timings."""
    best: list[float | None] = [None, None]
    deadline = time.monotonic() + budget
    for _ in range(3):
        seed = random.randrange(10**9)
        rng = random.Random(seed)
        prompt = f"[{seed}] " + " ".join(rng.choice(WORDS) for _ in range(180))
        for slot, payload, key in (
            (0, {"messages": [{"role": "user", "content": prompt}], "max_tokens": 1},
             "prompt_per_second"),
            (1, {"messages": [{"role": "user", "content": f"[{seed}] Count to a hundred."}],
                 "max_tokens": 64, "ignore_eos": True}, "predicted_per_second"),
        ):
            left = deadline - time.monotonic()
            if left <= 1:
                return tuple(best)
            try:
                timings = post(base_url, {"model": model, "cache_prompt": False, **payload},
                               left)["timings"]
            except (OSError, urllib.error.URLError):
                return tuple(best)
            best[slot] = max(best[slot] or 0.0, float(timings[key]))
    return tuple(best)


def pass_inputs(entailment: int, answers: int) -> dict[str, tuple[list[JudgeInput], list[bool]]]:
    """Each pass's inputs and the labels a person gave them: the dev set's first answer
    items, and its first entailment items taken a passage at a time (every item citing
    it), so that claims share passages as the nuggets of a run's answers do."""
    labelled = read_labelled_set(DEV_SET)
    by_passage: dict[str, list[Any]] = {}
    for item in labelled.entailment:
        by_passage.setdefault(item.passage, []).append(item)
    ent: list[Any] = []
    for items in by_passage.values():
        if len(ent) >= entailment:
            break
        ent += items
    ans = labelled.answers[:answers]
    return {
        "entailment": ([EntailmentInput(passage=i.passage, nugget=i.nugget) for i in ent],
                       [i.entailed for i in ent]),
        "answer_gold": ([answer_input(i, "gold") for i in ans], [i.correct for i in ans]),
        "answer_nuggets": ([answer_input(i, "nuggets") for i in ans],
                           [i.correct for i in ans]),
    }


def judged_pass(judge: OpenAIJudge, inputs: Sequence[JudgeInput], budget: float
                ) -> tuple[float, bool, list[Any] | None]:
    """(judgments/s, finished, outcomes if finished) of one pass, stopped after `budget`."""
    done = [0]

    def one_more() -> None:
        done[0] += 1

    started = time.perf_counter()
    with judge.session() as session:
        future = session.submit(inputs, on_judged=one_more)
        try:
            outcomes: list[Any] | None = future.result(timeout=budget)
        except FutureTimeout:
            outcomes = None
        # Read before the session ends: the calls it cancels then count as ended too.
        seconds, judged = time.perf_counter() - started, done[0]
    return judged / seconds, outcomes is not None, outcomes


def verdict(outcome: Any, field_name: str) -> bool | None:
    if isinstance(outcome, JudgeOutcome) and outcome.label is not None:
        value = outcome.label.get(field_name)
        return value if isinstance(value, bool) else None
    return None


def measure(model: str, setup: Setup, passes: dict[str, tuple[list[JudgeInput], list[bool]]],
            budget: float, say: Callable[[str], None]) -> Figures:
    figures = Figures()
    with watched(figures), EmbeddedJudge(model, var_dir=VAR, engine=setup.engine,
                                         options=setup.options, progress=None,
                                         startup_timeout=600, log_path=LOG) as server:
        figures.engine = server.engine_name
        figures.prefill, figures.decode = tokens_per_second(server.base_url, model, budget)
        judge = OpenAIJudge(JudgeConfig(base_url=server.base_url, model=model,
                                        concurrency=setup.options.n_parallel))
        for name in PASSES:
            inputs, humans = passes[name]
            rate, finished, outcomes = judged_pass(judge, inputs, budget)
            figures.rates[name] = (rate, finished)
            if outcomes is not None:
                field_name = "entailed" if name == "entailment" else "correct"
                agreed = sum(verdict(o, field_name) is h for o, h in zip(outcomes, humans,
                                                                         strict=True))
                figures.accuracy[name] = agreed / len(humans)
            say(f"  {name}: {'' if finished else '~'}{rate:.3f} j/s")
    return figures


# --- Report ------------------------------------------------------------------------------

def number(value: float | None, digits: int = 1, finished: bool = True) -> str:
    if value is None:
        return "-"
    return f"{'' if finished else '~'}{value:.{digits}f}"


def row(model: str, load: str, setup: str, f: Figures) -> str:
    rates = [number(f.rates[p][0], 3, f.rates[p][1]) if p in f.rates else "-" for p in PASSES]
    accuracy = [number(f.accuracy.get(p), 2) for p in PASSES]
    return (f"{model:<20} {load:<6} {setup:<6} {f.engine:<8} {number(f.prefill):>8} "
            f"{number(f.decode):>7} {rates[0]:>8} {rates[1]:>8} {rates[2]:>8}  "
            f"{'/'.join(accuracy):<14} {f.load:>5.2f} {100 * f.steal:>5.1f}%")


HEADER = (f"{'model':<20} {'load':<6} {'setup':<6} {'engine':<8} {'prefill':>8} {'decode':>7} "
          f"{'entail':>8} {'gold':>8} {'nuggets':>8}  {'accuracy e/g/n':<14} {'load':>5} "
          f"{'steal':>6}")


def ratio(new: float | None, old: float | None) -> str:
    return f"{new / old:.2f}x" if new and old else "-"


def main() -> None:
    if "--accuracy" in sys.argv[1:]:
        accuracy_main(sys.argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="qwen2.5-coder-1.5b,qwen2.5-coder-0.5b")
    parser.add_argument("--loads", default="quiet,cores,judge")
    parser.add_argument("--setups", default="today,new")
    parser.add_argument("--entailment", type=int, default=60)
    parser.add_argument("--answers", type=int, default=20)
    parser.add_argument("--budget", type=float, default=180.0)
    args = parser.parse_args()
    passes = pass_inputs(args.entailment, args.answers)
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; new engine: "
          f"{chosen_engine(None, var_dir=VAR)} ({system_info(VAR) or 'the prebuilt wheel'}); "
          f"{len(passes['entailment'][0])} entailment items (on "
          f"{len({i.passage for i in passes['entailment'][0] if isinstance(i, EntailmentInput)})}"
          f" passages), {args.answers} answer items of the dev set; "
          f"budget {args.budget:.0f} s", flush=True)
    results: dict[tuple[str, str, str], Figures] = {}
    for model in args.models.split(","):
        for load in args.loads.split(","):
            setups = args.setups.split(",")
            with competing(load):
                for name in setups:
                    print(f"{model} {load} {name}", flush=True)
                    results[(model, load, name)] = measure(
                        model, SETUPS[name], passes, args.budget,
                        lambda line: print(line, flush=True))
                    print(row(model, load, name, results[(model, load, name)]), flush=True)
    print()
    print(HEADER)
    for (model, load, name), figures in results.items():
        print(row(model, load, name, figures))
    print()
    for model in args.models.split(","):
        for load in args.loads.split(","):
            old = results.get((model, load, "today"))
            for name in args.setups.split(","):
                new = results.get((model, load, name))
                if name != "today" and new and old:
                    print(f"{model} {load}: {name}/today {ratios(new, old)}")
        for name in args.setups.split(","):
            quiet = results.get((model, "quiet", name))
            for load in args.loads.split(","):
                loaded = results.get((model, load, name))
                if load != "quiet" and quiet and loaded:
                    print(f"{model} {name}: {load}/quiet {ratios(loaded, quiet)}")


def ratios(figures: Figures, base: Figures) -> str:
    """Each figure of `figures` as a multiple of the same figure of `base`."""
    return (f"prefill {ratio(figures.prefill, base.prefill)}, decode "
            f"{ratio(figures.decode, base.decode)}, " + ", ".join(
                f"{p} {ratio(figures.rates[p][0], base.rates[p][0])}" for p in PASSES))

if __name__ == "__main__":
    main()
