"""The command line of bench/bench_grading.py (its options; the package docstring is its help)."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import tempfile
from pathlib import Path

import grading_bench
from grading_bench.content import MAX_NUGGETS
from grading_bench.embedded import bench_embedded
from grading_bench.judge_server import serve
from grading_bench.pipeline import bench_fake_judge
from grading_bench.workers import bench_workers


def main() -> None:
    parser = argparse.ArgumentParser(description=(grading_bench.__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--nuggets", type=int, default=MAX_NUGGETS, choices=range(1, 11),
                        metavar="1..10", help="nuggets per question (default 10)")
    parser.add_argument("--passage-words", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the fake judge takes per request (default 0.05)")
    parser.add_argument("--server-concurrency", type=int, default=16,
                        help="requests the fake judge serves at once, C (default 16)")
    parser.add_argument("--client-concurrency", type=int, default=None,
                        help="the judge's requests in flight, GRADER_CONCURRENCY (default "
                             "C: the server's parallel slots)")
    parser.add_argument("--batches", default="1024",
                        help="run_grade batch sizes to measure, comma-separated (default "
                             "1024, the service's)")
    parser.add_argument("--prefetch", default="0,2",
                        help="GRADING_PREFETCH values to measure with each batch size, "
                             "comma-separated; one AC run each (default 0,2: lock-step, "
                             "then the pipeline's default)")
    parser.add_argument("--probe-requests", type=int, default=2000,
                        help="calls for the server-alone and client-alone probes")
    parser.add_argument("--fake-judge", action=argparse.BooleanOptionalAction, default=True,
                        help="measure the pipeline against the fake judge (default on)")
    parser.add_argument("--workers", action=argparse.BooleanOptionalAction, default=True,
                        help="grade one run with one real Celery worker, then one with two "
                             "(default on; needs Redis)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11",
                        help="the workers' broker and result store: a database the "
                             "benchmark empties at the end (default redis://127.0.0.1:6379/11)")
    parser.add_argument("--workers-latency", type=float, default=0.2,
                        help="seconds the workers' fake judge takes per request (default 0.2)")
    parser.add_argument("--workers-slots", type=int, default=64,
                        help="requests the workers' fake judge serves at once (default 64)")
    parser.add_argument("--worker-concurrency", type=int, default=32,
                        help="GRADER_CONCURRENCY of each worker (default 32)")
    parser.add_argument("--chunk-nuggets", type=int, default=500,
                        help="GRADING_CHUNK_NUGGETS of the workers (default 500)")
    parser.add_argument("--embedded", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure the embedded llama.cpp judge (default on)")
    parser.add_argument("--embedded-model", action="append", default=None,
                        help="packaged model(s) to measure (default qwen2.5-coder-1.5b; "
                             "repeat for more, e.g. qwen2.5-coder-0.5b)")
    parser.add_argument("--embedded-sample", type=int, default=24,
                        help="distinct nuggets judged by the embedded judge (default 24)")
    parser.add_argument("--embedded-answers", type=int, default=4,
                        help="answer evaluations by the embedded judge (default 4)")
    parser.add_argument("--embedded-concurrency", type=int, default=4)
    parser.add_argument("--http-logs", action="store_true",
                        help="keep the judge client's per-request INFO log lines (the "
                             "settings' logging), which cost CPU on every call")
    parser.add_argument("--fake-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fake_server:
        serve(args.latency, args.server_concurrency)
        return
    args.batches = [int(b) for b in args.batches.split(",") if b.strip()]
    args.prefetch = [int(p) for p in args.prefetch.split(",") if p.strip()]
    args.embedded_model = args.embedded_model or ["qwen2.5-coder-1.5b"]
    if args.questions > 9999:
        parser.error("--questions must be at most 9999 (qIDs are Q0001..Q9999)")

    work = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    os.environ.setdefault("VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.workers:
        # This process sends the workers' tasks and reads their results there too.
        os.environ["CELERY_BROKER_URL"] = os.environ["CELERY_RESULT_BACKEND"] = args.redis_url
    import django

    django.setup()
    if not args.http_logs:
        # The settings log every HTTP request the judge client makes at INFO (one line
        # per judge call, ~10% of the client's CPU here); quiet them unless asked.
        for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
            logging.getLogger(name).setLevel(logging.WARNING)
    try:
        load = os.getloadavg()
        print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} before starting")
        if args.fake_judge:
            bench_fake_judge(args, work)
            print(f"load average after the fake-judge part: {os.getloadavg()[0]:.2f}")
        if args.workers:
            bench_workers(args, work)
            print(f"load average after the workers part: {os.getloadavg()[0]:.2f}")
        if args.embedded:
            bench_embedded(args)
    finally:
        shutil.rmtree(work, ignore_errors=True)

