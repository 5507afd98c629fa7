"""One grading pass over the campaign, as `manage.py grade` makes it, timed.

Each run is taken (`round_take`) and graded by `part_grading` (ranking runs
go to `rubric_run_grade`: `passages_to_grade`, then `rubric_grade`), one run after
another with one judge client, as the command does. The judge calls are counted twice:
by the services' reports and by the fake server's request counter (what a campaign pays).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from grading_bench.measuring import make_judge

from rubric_bench.judge_server import RubricJudgeProcess


@dataclass
class RunGraded:
    name: str
    judge_calls: int
    seconds: float


@dataclass
class GradingPass:
    received: int = 0  # requests the fake judge answered during the pass
    reported: int = 0  # judge calls the reports count
    pairs: int = 0  # (passage, item) pairs linked, summed over runs
    needs_review: int = 0
    seconds: float = 0.0
    runs: list[RunGraded] = field(default_factory=list)


def grade_campaign(*, slug: str, server: RubricJudgeProcess, concurrency: int,
                   include_graded: bool) -> GradingPass:
    """Grade the campaign's pending runs (with `include_graded`, all of them again)."""
    from campaign.models import Campaign
    from grading.rubric.grades import RubricGradeReport
    from grading.work.part_grading import part_grading
    from grading.work.rounds import campaign_grading_queue, round_take

    campaign = Campaign.objects.get(slug=slug)
    run_ids = campaign_grading_queue(campaign=campaign, include_graded=include_graded)
    judge = make_judge(server.base_url, concurrency)
    token = f"bench-rubric-{uuid.uuid4()}"
    graded = GradingPass()
    before = server.calls()
    started = time.perf_counter()
    for run_id in run_ids:
        part = round_take(run_id=run_id, token=token)
        if part is None:
            raise RuntimeError(f"run {run_id} could not be claimed")
        run = part.job.run
        run_started = time.perf_counter()
        outcome = part_grading(part=part, token=token, judge=judge, queue_scoring=False)
        report = outcome.report
        if not isinstance(report, RubricGradeReport):
            raise RuntimeError(f"{run.name} was not graded: {outcome.failure} "
                               f"{judge.errors[:3]}")
        graded.runs.append(RunGraded(run.name, report.judge_calls,
                                     time.perf_counter() - run_started))
        graded.reported += report.judge_calls
        graded.pairs += report.pairs
        graded.needs_review += report.needs_review
    graded.seconds = time.perf_counter() - started
    graded.received = server.calls() - before
    return graded
