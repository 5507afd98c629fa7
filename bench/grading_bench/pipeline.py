"""The pipeline against the hashing judge: the clients, a first and a second grading."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grading_bench.campaign import delete_campaign, make_campaign, submit
from grading_bench.content import PR_RUN, write_ac_run, write_pr_run
from grading_bench.judge_server import JudgeProcess
from grading_bench.measuring import grade, probe_clients, probe_server

if TYPE_CHECKING:
    from submissions.models import Run


def bench_fake_judge(args: argparse.Namespace, work: Path) -> None:
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    server = JudgeProcess(args.latency, args.server_concurrency, args.client_concurrency)
    slug = make_campaign(args.questions)
    try:
        print(f"fake judge at {server.base_url}: latency {args.latency * 1000:.0f} ms, "
              f"C = {args.server_concurrency} slots; ideal C / latency = {server.ideal:.0f} "
              f"calls/s; judge client concurrency {server.client_concurrency}")
        print("the fake server alone:")
        probe_server(server, args.probe_requests, args.passage_words)
        print("the clients side by side (verdict calls with logprobs; CPU per call is "
              "this process's):")
        probe_clients(server, args.probe_requests, args.passage_words)

        variants = [(batch, prefetch) for batch in args.batches for prefetch in args.prefetch]
        print(f"campaign: {args.questions} questions x {args.nuggets} nuggets per AC run, "
              f"one AC run of distinct nuggets per (batch, prefetch) measured")
        pr_path = work / PR_RUN
        write_pr_run(pr_path, questions=args.questions, nuggets=args.nuggets,
                     words=args.passage_words)
        submit(slug, "pr", PR_RUN, pr_path)
        runs: list[tuple[Run, Path]] = []
        for variant, _ in enumerate(variants):
            path = work / f"T{variant}-AC-1"
            write_ac_run(path, questions=args.questions, nuggets=args.nuggets, variant=variant)
            runs.append((submit(slug, "ac", path.name, path), path))

        print(f"grading with run_grade (first grading: every nugget is new; prefetch 0 is "
              f"the lock-step pipeline, batch after batch; GRADING_PREFETCH is "
              f"{settings.GRADING_PREFETCH}):")
        for (run, _), (batch, prefetch) in zip(runs, variants, strict=True):
            _first_grading(run, server, batch, prefetch)

        print("second grading of the same campaign:")
        _second_grading(slug, runs, server, max(args.batches), work)
        stats = server.stats()
        print(f"fake server over the whole benchmark: {stats['total']:,} calls "
              f"({stats['calls']}), at most {stats['max_in_flight']} in flight, "
              f"at most {stats['max_waiting']} waiting for a slot")
    finally:
        server.stop()
        if os.environ.get("DATABASE_URL"):
            delete_campaign(slug)


def _first_grading(run: Run, server: JudgeProcess, batch: int, prefetch: int) -> None:
    before = server.stats()
    graded = grade(run, server, batch, prefetch)
    after = server.stats()
    report, elapsed = graded.report, graded.elapsed
    received = after["total"] - before["total"]
    made = report.entailment_calls + report.answer_calls
    rate = received / elapsed
    client_cpu = graded.cpu_seconds - graded.pipeline_cpu_seconds
    server_cpu = after["cpu_seconds"] - before["cpu_seconds"]
    ideal_time = received / server.ideal
    print(f"  {run.name}, batch={batch}, prefetch={prefetch}: {made:,} judgments "
          f"({report.entailment_calls:,} entailment + {report.answer_calls:,} answer; "
          f"{received:,} calls received by the server; needs review {report.needs_review})")
    print(f"    elapsed {elapsed:.2f} s = {rate:.1f} calls/s ({made / elapsed:.1f} "
          f"judgments/s); ideal {server.ideal:.0f} calls/s = {ideal_time:.2f} s for these "
          f"calls; ratio {rate / server.ideal:.3f} (target >= 0.9 at 50 ms, 0.95 at 200 ms)")
    pipeline_cpu = graded.pipeline_cpu_seconds / made * 1000
    print(f"    CPU: judge client {client_cpu / received * 1000:.2f} ms per call, grading "
          f"thread (hashing, queries, inserts, links) {pipeline_cpu:.2f} ms per judgment, "
          f"fake server {server_cpu / max(1, received) * 1000:.2f} ms per call; "
          f"{graded.judge.batches} batches")


def _second_grading(slug: str, runs: list[tuple[Run, Path]], server: JudgeProcess, batch: int,
                    work: Path) -> None:
    before = server.calls()
    made = 0
    started = time.perf_counter()
    for run, _ in runs:
        report = grade(run, server, batch).report
        made += report.entailment_calls + report.answer_calls
    elapsed = time.perf_counter() - started
    print(f"  the same {len(runs)} AC run(s) again: {made} judge calls made, "
          f"{server.calls() - before} LLM calls received by the server (target 0), "
          f"{elapsed:.2f} s")

    first, first_path = runs[0]
    copy = work / "DUP-AC-1"
    shutil.copyfile(first_path, copy)
    duplicate = submit(slug, "ac", copy.name, copy)
    before = server.calls()
    graded = grade(duplicate, server, batch)
    report, elapsed = graded.report, graded.elapsed
    print(f"  {duplicate.name}, identical content to {first.name} "
          f"({report.nuggets:,} nuggets, {report.answers_judged:,} answers): "
          f"{report.entailment_calls + report.answer_calls} judge calls made, "
          f"{server.calls() - before} LLM calls received by the server (target 0), "
          f"{elapsed:.2f} s")
