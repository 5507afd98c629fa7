"""The pipeline against the hashing judge: the probes, a first and a second grading."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from grading_bench.campaign import delete_campaign, make_campaign, submit
from grading_bench.content import PR_RUN, write_ac_run, write_pr_run
from grading_bench.judge_server import JudgeProcess
from grading_bench.measuring import grade, probe_server

if TYPE_CHECKING:
    from grading.services import GradeReport
    from submissions.models import Run


def bench_fake_judge(args: argparse.Namespace, work: Path) -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    server = JudgeProcess(args.latency, args.server_concurrency, args.client_concurrency)
    slug = make_campaign(args.questions)
    try:
        print(f"fake judge at {server.base_url}: latency {args.latency * 1000:.0f} ms, "
              f"C = {args.server_concurrency} slots; ideal C / latency = {server.ideal:.0f} "
              f"judgments/s; judge client concurrency {server.client_concurrency}")
        print("what each part can sustain alone:")
        probe_server(server, args.probe_requests, args.passage_words)

        print(f"campaign: {args.questions} questions x {args.nuggets} nuggets per AC run, "
              f"one AC run of distinct nuggets per batch size")
        pr_path = work / PR_RUN
        write_pr_run(pr_path, questions=args.questions, nuggets=args.nuggets,
                     words=args.passage_words)
        submit(slug, "pr", PR_RUN, pr_path)
        runs: list[tuple[Run, Path]] = []
        for variant, _ in enumerate(args.batches):
            path = work / f"T{variant}-AC-1"
            write_ac_run(path, questions=args.questions, nuggets=args.nuggets, variant=variant)
            runs.append((submit(slug, "ac", path.name, path), path))

        print("grading with run_grade (first grading: every nugget is new):")
        for (run, _), batch in zip(runs, args.batches, strict=True):
            _first_grading(run, server, batch)

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


def _first_grading(run: Run, server: JudgeProcess, batch: int) -> None:
    before = server.stats()
    graded = grade(run, server, batch)
    after = server.stats()
    report, elapsed, judge = graded.report, graded.elapsed, graded.judge
    received = after["total"] - before["total"]
    made = report.entailment_calls + report.answer_calls
    rate = made / elapsed
    outside = elapsed - judge.seconds
    outside_cpu = graded.cpu_seconds - judge.cpu_seconds
    server_cpu = after["cpu_seconds"] - before["cpu_seconds"]
    ideal_inside = sum(-(-n // server.concurrency) for n in _batch_sizes(report, batch)) \
        * server.latency
    print(f"  {run.name}, batch={batch}: {made:,} judgments made "
          f"({report.entailment_calls:,} entailment + {report.answer_calls:,} answer; "
          f"server received {received:,}; needs review {report.needs_review})")
    print(f"    elapsed {elapsed:.2f} s = {rate:.1f} judgments/s; ideal {server.ideal:.0f}/s; "
          f"ratio {rate / server.ideal:.3f} (target >= 0.9)")
    print(f"    inside judge_many: {judge.seconds:.2f} s in {judge.batches} batches "
          f"({made / judge.seconds:.1f}/s = {made / judge.seconds / server.ideal:.3f} of ideal; "
          f"lock-step minimum for these batches {ideal_inside:.2f} s); "
          f"outside (hashing, queries, inserts, links): {outside:.2f} s "
          f"= {outside / elapsed:.1%} of elapsed")
    print(f"    CPU: judge client {judge.cpu_seconds / made * 1000:.2f} ms per call "
          f"({judge.cpu_seconds / judge.seconds:.0%} of a core while in judge_many), "
          f"pipeline outside judge_many {outside_cpu / made * 1000:.2f} ms per judgment, "
          f"fake server {server_cpu / max(1, received) * 1000:.2f} ms per call")
    # One process on one idle core: the judge calls take at least their lock-step time
    # and at least the client's CPU; the pipeline's own work runs between batches.
    bound = made / (max(ideal_inside, judge.cpu_seconds) + outside_cpu)
    print(f"    ceiling from these CPU costs with a whole core for this process: "
          f"{bound:.0f} judgments/s = {bound / server.ideal:.3f} of ideal")


def _batch_sizes(report: GradeReport, batch: int) -> Iterator[int]:
    for calls in (report.entailment_calls, report.answer_calls):
        full, rest = divmod(calls, batch)
        yield from [batch] * full
        if rest:
            yield rest


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
