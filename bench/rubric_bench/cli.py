"""The command line of bench/bench_rubric.py (its options; the package docstring is its help)."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import tempfile
from pathlib import Path

import rubric_bench
from rubric_bench.content import MAX_ITEMS, Sizes, write_campaign
from rubric_bench.grading import GradingPass, RunGraded, grade_campaign
from rubric_bench.judge_server import RubricJudgeProcess, serve

#: --quick: a few hundred judge calls, well under a minute on a loaded machine.
QUICK = {"runs": 10, "queries": 10, "depth": 10, "items": 3, "pool": 20}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(rubric_bench.__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--depth", type=int, default=20,
                        help="passages graded per query and run (the track's depth)")
    parser.add_argument("--items", type=int, default=5, choices=range(1, MAX_ITEMS + 1),
                        metavar=f"1..{MAX_ITEMS}", help="test-bank items per query")
    parser.add_argument("--pool", type=int, default=60,
                        help="corpus passages per query the runs retrieve from (>= depth)")
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the fake judge takes per request (default 0.05)")
    parser.add_argument("--slots", type=int, default=16,
                        help="requests the fake judge serves at once, S; the judge "
                             "client's concurrency (default 16)")
    parser.add_argument("--seed", type=int, default=0, help="the rankings' RNG seed")
    quick = ", ".join(f"--{name} {value}" for name, value in QUICK.items())
    parser.add_argument("--quick", action="store_true",
                        help=f"smaller defaults: {quick} (options given still win)")
    parser.add_argument("--fake-server", action="store_true", help=argparse.SUPPRESS)
    return parser


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    if args.quick:
        parser.set_defaults(**QUICK)
        args = parser.parse_args()
    if args.fake_server:
        serve(args.latency, args.slots)
        return
    for name in ("runs", "queries", "depth", "pool", "slots"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.depth > args.pool:
        parser.error(f"--depth ({args.depth}) cannot exceed --pool ({args.pool}): a run "
                     "retrieves distinct passages")
    sizes = Sizes(runs=args.runs, queries=args.queries, depth=args.depth, items=args.items,
                  pool=args.pool, seed=args.seed)

    work = Path(tempfile.mkdtemp(prefix="bench-rubric-"))
    os.environ.setdefault("VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    # The settings log every HTTP request the judge client makes at INFO (one line per
    # judge call, and CPU spent on each): quiet them, as bench_grading.py does.
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        _bench(sizes, args.latency, args.slots, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _bench(sizes: Sizes, latency: float, slots: int, work: Path) -> None:
    from django.core.management import call_command

    from rubric_bench.campaign import load_campaign

    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} "
          "before starting")
    print(f"campaign: {sizes.runs} ranking runs x {sizes.queries} queries x depth "
          f"{sizes.depth}, {sizes.items} test-bank items per query, a pool of {sizes.pool} "
          f"passages per query (seed {sizes.seed})")
    call_command("migrate", verbosity=0)
    files = write_campaign(work / "campaign", sizes, slug=f"bench-rubric-{os.getpid()}")
    slug = load_campaign(files)
    try:
        with RubricJudgeProcess(latency, slots) as server:
            print(f"fake judge at {server.base_url}: latency {latency * 1000:.0f} ms, "
                  f"S = {slots} slots, ideal S / latency = {slots / latency:.0f} calls/s; "
                  f"judge client concurrency {slots}")
            print("first grading (manage.py grade's path: part_grading, run after run):")
            first = grade_campaign(slug=slug, server=server, concurrency=slots,
                                   include_graded=False)
            _print_first(first, sizes, files.retrieved, latency, slots)
            print("second grading of every run (all cached):")
            second = grade_campaign(slug=slug, server=server, concurrency=slots,
                                    include_graded=True)
            print(f"  judge calls made: {second.received} (target 0; the reports say "
                  f"{second.reported}), {len(second.runs)} runs, {second.pairs:,} pairs "
                  f"linked, in {second.seconds:.2f} s")
        print(f"load average after grading: {os.getloadavg()[0]:.2f}")
    finally:
        if os.environ.get("DATABASE_URL"):
            from grading_bench.campaign import delete_campaign

            delete_campaign(slug)


def _print_first(first: GradingPass, sizes: Sizes, retrieved: int, latency: float,
                 slots: int) -> None:
    distinct = retrieved * sizes.items
    made = first.received
    rows = [
        ("runs x queries x depth x items (naive calls)", f"{sizes.naive_calls:,}"),
        ("distinct (passage, item) pairs in the runs", f"{distinct:,}"),
        ("judge calls made (fake server's counter)",
         f"{made:,} ({'=' if made == distinct else '!='} distinct pairs; the reports say "
         f"{first.reported:,}; needs review {first.needs_review})"),
        ("dedup ratio naive / made", f"{sizes.naive_calls / max(1, made):.2f}"),
        ("wall time", f"{first.seconds:.2f} s"),
        ("ideal time = calls x latency / slots", f"{made * latency / slots:.2f} s"),
        ("throughput ratio ideal / measured", _ratio(made, first.seconds, latency, slots)),
    ]
    for label, value in rows:
        print(f"  {label + ':':<46} {value}")
    head, rest = first.runs[0], first.runs[1:]
    print(f"  of which the first run, {head.name}: {_part([head], latency, slots)}")
    if rest:
        print(f"  and the other {len(rest)} runs: {_part(rest, latency, slots)}")


def _part(runs: list[RunGraded], latency: float, slots: int) -> str:
    calls = sum(run.judge_calls for run in runs)
    seconds = sum(run.seconds for run in runs)
    return (f"{calls:,} calls in {seconds:.2f} s, ideal {calls * latency / slots:.2f} s, "
            f"ratio {_ratio(calls, seconds, latency, slots)}")


def _ratio(calls: int, seconds: float, latency: float, slots: int) -> str:
    return f"{calls * latency / slots / seconds:.3f}" if seconds > 0 else "n/a"
