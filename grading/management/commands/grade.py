"""`python manage.py grade SLUG`: grade every pending AC run in-process and wait.

The same service as the Celery task (claim, grade, finish), run here one run after
another with the judge of the settings (vLLM, or the embedded llama.cpp judge).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg
from campaign.management.progress import RunBar, StepBar
from grading.judge import Judge, JudgeUnavailable
from grading.models import JudgeSlot
from grading.services import (
    GradeReport,
    campaign_grading_queue,
    run_claim_for_grading,
    run_grade,
    run_grading_finish,
    run_grading_heartbeat,
)
from grading.setup import official_judge, official_model_name, second_judge
from grading.validation.services import grading_refusal
from scoring.services import campaign_score
from submissions.models import Run


class Command(BaseCommand):
    help = "Grade every pending AC run of a campaign with the LLM judge, in this process."

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
            self.stdout.write("No AC run is waiting for grading.")
            return
        self.stdout.write(f"Grading {len(run_ids)} run(s); starting the judge...")
        judge = official_judge()
        self.stdout.write(f"Judge: {judge.identity.model} at {judge.config.base_url}")
        token = f"grade-command-{uuid.uuid4()}"
        failed = 0
        for run_id in run_ids:
            if not run_claim_for_grading(run_id=run_id, token=token):
                self.stdout.write(f"run {run_id}: taken by a worker meanwhile, skipped")
                continue
            run = Run.objects.select_related("track__campaign").get(pk=run_id)
            started = time.perf_counter()
            try:
                with run_grading_heartbeat(run=run, token=token):
                    report = _graded(run, judge, run.name)
                    second = second_judge(run.track)
                    if second is not None:
                        _graded(run, second, f"{run.name} (second judge)", JudgeSlot.SECOND)
            except JudgeUnavailable as exc:
                run_grading_finish(run=run, failed=True)
                self.stderr.write(f"{run.name}: judge unavailable ({exc}); run marked failed")
                failed += 1
                continue
            except BaseException:
                run_grading_finish(run=run, failed=True)
                raise
            run_grading_finish(run=run)
            seconds = time.perf_counter() - started
            calls = report.entailment_calls + report.answer_calls
            self.stdout.write(
                f"{run.name}: {report.nuggets} nuggets, {report.answers_judged}/{report.answers}"
                f" answers judged, {calls} judge calls in {seconds:.1f} s"
                + (f", {report.needs_review} need review" if report.needs_review else "")
            )
        with StepBar("scoring") as bar:
            evaluations = campaign_score(campaign=campaign, progress=bar)
        self.stdout.write(f"Scored: {len(evaluations)} leaderboard(s) recomputed.")
        if failed:
            raise CommandError(f"{failed} run(s) could not be graded")


def _graded(run: Run, judge: Judge, desc: str, slot: str = JudgeSlot.OFFICIAL) -> GradeReport:
    with RunBar(desc) as bar:
        return run_grade(run=run, judge=judge, slot=slot, progress=bar)
