"""`python manage.py grade SLUG`: grade every pending run (AC, ranking, response) in this
process, one after another, then score (docs/operations.md, "The `grade` command")."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from types import FrameType
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg
from campaign.management.progress import RunBar
from grading.judge import Judge
from grading.rubric.grades import RubricGradeReport
from grading.setup import official_judge, official_model_name
from grading.validation.services import grading_refusal
from grading.work.part_grading import RunGradeReport, part_grading
from grading.work.rounds import campaign_grading_queue, part_fail, round_take

INTERRUPTED = "grading was interrupted (the grade command stopped)"
FAILED_RUNS = ("{count} run(s) could not be graded: {names}. Grade them again with "
               "`manage.py grade {slug}`: only the judgments still missing cost judge calls")

logger = logging.getLogger(__name__)


TAKEN_OVER = "{run}: taken over by a worker while being graded here; it is graded there"

class Command(BaseCommand):
    help = ("Grade every pending AC, ranking and response run of a campaign with the LLM "
            "judge, in this process.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the campaign")
        parser.add_argument("--all", action="store_true",
                            help="re-grade graded runs too (only new inputs cost judge calls)")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        refusal = grading_refusal(campaign=campaign, judge_model=official_model_name())
        if refusal:
            raise CommandError(refusal)
        run_ids = campaign_grading_queue(campaign=campaign, include_graded=options["all"])
        if not run_ids:
            self.stdout.write("No run is waiting for grading.")
            return
        self.stdout.write(f"Grading {len(run_ids)} run(s); starting the judge...")
        judge = official_judge(campaign)
        calibration = judge.calibration.source if judge.calibration else "none fitted"
        self.stdout.write(f"Judge: {judge.identity.model} at {judge.config.base_url} "
                          f"(calibration: {calibration})")
        with _interrupted_by_termination():
            failed = self._grade_each(run_ids, judge)
        # Scoring's own command, by name: grading imports nothing of scoring.
        call_command("score", campaign.slug, stdout=self.stdout, stderr=self.stderr)
        if failed:
            raise CommandError(FAILED_RUNS.format(count=len(failed), names=", ".join(failed),
                                                  slug=campaign.slug))

    def _grade_each(self, run_ids: list[int], judge: Judge) -> list[str]:
        """Grade the runs one after another; the names of those that failed."""
        token = f"grade-command-{uuid.uuid4()}"
        failed: list[str] = []
        for run_id in run_ids:
            part = round_take(run_id=run_id, token=token)
            if part is None:
                self.stdout.write(f"run {run_id}: taken by a worker meanwhile, skipped")
                continue
            run = part.job.run
            started = time.perf_counter()
            try:
                # Scored below, in this process, once every run is done.
                outcome = part_grading(part=part, token=token, judge=judge, queue_scoring=False,
                                       watch=RunBar)
            except KeyboardInterrupt:
                part_fail(part=part, token=token, reason=INTERRUPTED)  # not left held
                raise
            except Exception:
                # part_grading marked the run FAILED with a reason; the traceback goes to
                # the log for whoever fixes it, and the other runs are still graded.
                logger.exception("grading %s stopped on an unexpected error", run.name)
                run.refresh_from_db(fields=["failure_reason"])
                self.stderr.write(f"{run.name}: run marked failed: {run.failure_reason}")
                failed.append(run.name)
                continue
            if outcome.lost:
                # Another task took the run over (its claim went stale); it grades it there.
                self.stdout.write(TAKEN_OVER.format(run=run.name))
                continue
            report = outcome.report
            if report is None:
                self.stderr.write(f"{run.name}: run marked failed: {outcome.failure}")
                failed.append(run.name)
                continue
            seconds = time.perf_counter() - started
            self.stdout.write(f"{run.name}: {_graded(report)}, {report.judge_calls} judge "
                              f"calls in {seconds:.1f} s"
                              + (f", {report.needs_review} need review"
                                 if report.needs_review else "")
                              + _without_items(report))
        return failed


@contextlib.contextmanager
def _interrupted_by_termination() -> Iterator[None]:
    """While the block runs, SIGINT, SIGTERM and SIGHUP stop the command, so the run being graded is
    released, not left held (SIGINT too: a shell starts background jobs with it ignored). Only
    the main thread may set handlers; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    before = {signum: signal.signal(signum, interrupt)
              for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _graded(report: RunGradeReport) -> str:
    """What was graded: an AC run's nuggets and answers, or the passages rated on the
    test bank and their (passage, item) pairs."""
    if isinstance(report, RubricGradeReport):
        return f"{report.passages} passages, {report.pairs} pairs"
    return f"{report.nuggets} nuggets, {report.answers_judged}/{report.answers} answers judged"


def _without_items(report: RunGradeReport) -> str:
    # Said, not failed: the test bank may be drafted and graded query by query, and
    # grading the run again later costs calls only for the new items' pairs.
    if isinstance(report, RubricGradeReport) and report.without_items:
        return f"; no test-bank item yet for {', '.join(report.without_items)}"
    return ""
