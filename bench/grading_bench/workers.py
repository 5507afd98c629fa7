"""One large AC run graded by one real Celery worker, then another by two.

The workers are `celery -A config worker --pool=solo` processes on Redis (--redis-url: a
database number of the benchmark's own, emptied at the end), on this benchmark's
database (the throwaway SQLite file, or DATABASE_URL), against a fake judge of their
own with --workers-latency (200 ms) and --workers-slots (64). Each worker keeps at most
GRADER_CONCURRENCY = --worker-concurrency (32) calls in flight, its share of a judge that
several workers use: one worker fills half the judge's slots, two fill them all. Runs
are split into chunks of GRADING_CHUNK_NUGGETS = --chunk-nuggets (500) nugget records.

Printed: for one worker and for two, the time from sending the run's task to the end of
its last chunk, the calls and judgments per second, the chunks each worker took, and
the ratio of the two rates (target: at least 1.7); then the counts that show nothing
was lost or made twice: the calls the judge received per kind against the judgments
stored and the links written.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grading_bench.campaign import delete_campaign, make_campaign, submit
from grading_bench.content import PR_RUN, write_ac_run, write_pr_run
from grading_bench.judge_server import JudgeProcess

if TYPE_CHECKING:
    from submissions.models import Run

REPO = Path(__file__).resolve().parents[2]
#: The AC runs' variants (distinct nuggets; the campaign is the workers' own, so no
#: judgment of the pipeline part's runs is found in its cache).
VARIANTS = (0, 1)
#: How long a worker may take to start, or a run to be graded, before the benchmark stops.
PATIENCE = 3600.0


def bench_workers(args: argparse.Namespace, work: Path) -> None:
    import redis

    try:
        redis.Redis.from_url(args.redis_url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        print(f"workers: not measured, no Redis at {args.redis_url} ({error})")
        return
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    server = JudgeProcess(args.workers_latency, args.workers_slots, args.worker_concurrency)
    slug = make_campaign(args.questions, suffix="-workers")
    queue = f"bench-grading-{os.getpid()}"
    try:
        print(f"workers: fake judge of {args.workers_slots} slots, "
              f"{args.workers_latency * 1000:.0f} ms: ideal {server.ideal:.0f} calls/s; each "
              f"worker keeps at most {args.worker_concurrency} calls in flight (one worker's "
              f"ideal: {args.worker_concurrency / args.workers_latency:.0f} calls/s); chunks "
              f"of {args.chunk_nuggets} nugget records; broker {args.redis_url}")
        pr_path = work / "workers-pr"
        write_pr_run(pr_path, questions=args.questions, nuggets=args.nuggets,
                     words=args.passage_words)
        submit(slug, "pr", PR_RUN, pr_path)
        rates = []
        for count, variant in zip((1, 2), VARIANTS, strict=True):
            path = work / f"W{count}-AC-1"
            write_ac_run(path, questions=args.questions, nuggets=args.nuggets, variant=variant)
            run = submit(slug, "ac", path.name, path)
            rates.append(_graded_by_workers(args, run, server, queue, count))
        print(f"  two workers / one worker: {rates[1] / rates[0]:.2f}x the calls per second "
              f"(target >= 1.7)")
    finally:
        server.stop()
        # The round's scoring tasks went to the default queue, which no worker here takes.
        redis.Redis.from_url(args.redis_url).flushdb()
        if os.environ.get("DATABASE_URL"):
            delete_campaign(slug)


def _graded_by_workers(args: argparse.Namespace, run: Run, server: JudgeProcess, queue: str,
                       count: int) -> float:
    from django.test import override_settings

    from grading.tasks import grade_part
    from grading.work.rounds import rounds_start

    env = {**os.environ, "GRADER_BASE_URL": server.base_url, "GRADER_MODEL": "bench",
           "GRADER_CONCURRENCY": str(args.worker_concurrency),
           "CELERY_BROKER_URL": args.redis_url, "CELERY_RESULT_BACKEND": args.redis_url}
    names = [f"bench{number}-{os.getpid()}@bench" for number in range(1, count + 1)]
    workers = [subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo",
         "--loglevel=WARNING", "--without-gossip", "--without-mingle", "-Q", queue,
         "--hostname", name], cwd=REPO, env=env, stdout=subprocess.DEVNULL)
        for name in names]
    try:
        _wait_until_ready(names)
        before = server.stats()
        started = time.perf_counter()
        with override_settings(GRADING_CHUNK_NUGGETS=args.chunk_nuggets):
            parts = rounds_start(run_ids=[run.pk])
        sent = [grade_part.apply_async(args=(part,), queue=queue) for part in parts]
        chunks: list[dict[str, Any]] = [task.get(timeout=PATIENCE) for task in sent]
        elapsed = time.perf_counter() - started
        after = server.stats()
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)
    received = {kind: after["calls"].get(kind, 0) - before["calls"].get(kind, 0)
                for kind in after["calls"]}
    calls = sum(received.values())
    made = sum(c["entailment_calls"] + c["answer_calls"] for c in chunks)
    print(f"  {count} worker(s), {run.name}: {made:,} judgments, {calls:,} calls in "
          f"{elapsed:.2f} s = {calls / elapsed:.1f} calls/s ({made / elapsed:.1f} "
          f"judgments/s); {calls / elapsed / server.ideal:.3f} of the judge's ideal")
    _print_chunks_and_counts(run, received)
    return calls / elapsed


def _wait_until_ready(names: list[str]) -> None:
    from config.celery import app

    deadline = time.monotonic() + PATIENCE
    ready: set[str] = set()
    while ready != set(names):
        if time.monotonic() > deadline:
            raise RuntimeError(f"workers {sorted(set(names) - ready)} never answered a ping")
        for answer in app.control.ping(destination=names, timeout=1.0) or []:
            ready.update(answer)


def _print_chunks_and_counts(run: Run, received: dict[str, int]) -> None:
    from django.db.models import Count

    from grading.models import AnswerEvaluation, GradingPart, Judgment, NuggetEntailment
    from submissions.models import AnswerRecord, NuggetRecord

    taken = dict(GradingPart.objects.filter(job__run=run).values("graded_by")
                 .annotate(n=Count("id")).values_list("graded_by", "n"))
    print(f"    chunks taken: {', '.join(f'{name} {n}' for name, n in sorted(taken.items()))}")
    nuggets = NuggetRecord.objects.filter(run=run).count()
    entailments = Judgment.objects.filter(nugget_links__nugget__run=run).distinct().count()
    answers = AnswerEvaluation.objects.filter(answer__run=run)
    evaluations = Judgment.objects.filter(answer_links__answer__run=run).distinct()
    relevance = sum(len(j.input["nuggets"]) for j in evaluations
                    if j.llm_label and j.llm_label["correct"])
    counts = [
        ("entailment judgments stored", entailments, "calls", received.get("entailed", 0)),
        ("nugget links", NuggetEntailment.objects.filter(nugget__run=run).count(),
         "nugget records", nuggets),
        ("answer judgments stored", evaluations.count(), "calls", received.get("correct", 0)),
        ("answer links", answers.count(), "answers",
         AnswerRecord.objects.filter(run=run).count()),
        ("nuggets shown to correct answers", relevance, "relevance calls",
         received.get("relevant", 0)),
    ]
    for what, stored, against, expected in counts:
        verdict = "equal" if stored == expected else "DIFFERENT"
        print(f"    {what} {stored:,} vs {against} {expected:,}: {verdict}")
