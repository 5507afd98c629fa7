"""Two real processes grading the same run: a claim taken over, links written at once,
and one large run graded in chunks by two Celery workers."""

from __future__ import annotations

import dataclasses
import json
import os
import select
import subprocess
import sys
import threading
from datetime import timedelta
from typing import Any

import pytest
from celery.result import AsyncResult
from django.db import transaction
from django.utils import timezone
from pytest_django import Settings as SettingsWrapper

from grading.models import (
    AnswerEvaluation,
    GradingJob,
    GradingPart,
    Judgment,
    NuggetEntailment,
    PartStatus,
)
from grading.r2c2.pipeline import GradeReport, _link, run_grade
from grading.selectors import marked_run
from grading.tasks import grade_part
from grading.work.claims import part_claim
from grading.work.part_grading import part_grading
from grading.work.rounds import rounds_start
from submissions.models import AnswerRecord, NuggetRecord, Run, RunStatus
from tests.grading.fixtures import asked_once, judge_from_marked_example, make_judge
from tests.grading.link_race import PAUSED_AT_INSERT
from tests.grading.rounds import queued_part
from tests.grading.scripted_server import (
    ChatRequest,
    NoReply,
    ScriptedJudge,
    ScriptedServer,
    Step,
)
from tests.support import REPO, Personas, Upload, start_worker, upload_toy_ac_run

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

#: How long a test waits for another process before it fails (never reached when it works).
PATIENCE = 120.0

#: The toy run's marks (tests/data/toy/WASEDA-AC-1.marked), as one grader gives them.
TOY_MARKS = "RRBNBRRN"


def marks(run: Run) -> str:
    return "".join(m.mark for b in marked_run(run=run) for m in b.marked.nuggets)


@dataclasses.dataclass(kw_only=True)
class HeldEntailments(ScriptedJudge):
    """The toy judge, holding its entailment replies until `TAKEN_OVER` is released;
    `arrived` is set when the first entailment request comes."""

    arrived: threading.Event = dataclasses.field(default_factory=threading.Event)

    def __call__(self, request: ChatRequest) -> Step:
        step = super().__call__(request)
        if request.schema_name != "r2c2_entailed" or isinstance(step, NoReply):
            return step
        self.arrived.set()
        return dataclasses.replace(step, after=TAKEN_OVER)


TAKEN_OVER = "taken over"


def test_a_grader_whose_run_was_taken_over_stops_without_linking_or_finishing(
    personas: Personas, upload: Upload, worker_env: dict[str, str],
    stop_later: list[subprocess.Popen[Any]],
) -> None:
    run_id = upload_toy_ac_run(personas, upload)
    example = judge_from_marked_example()
    judge = HeldEntailments(entailed=example.entailed, correct=example.correct,
                            relevant=example.relevant)
    with ScriptedServer(judge) as server:
        # A slow worker: its entailment requests wait at the judge.
        queue = f"slow-{os.getpid()}"
        stop_later.append(start_worker({**worker_env, "GRADER_BASE_URL": server.base_url},
                                       queues=queue, name="slow"))
        part_id = queued_part(Run.objects.get(pk=run_id))
        slow = grade_part.apply_async(args=(part_id,), queue=queue)
        assert judge.arrived.wait(timeout=PATIENCE), "the slow worker never judged"
        # Its heartbeat is old; this process takes the part over. The round's row is
        # locked, so the slow worker's heartbeat cannot slip between the two writes.
        with transaction.atomic():
            GradingJob.objects.select_for_update().filter(run_id=run_id).update(
                heartbeat=timezone.now() - timedelta(hours=1))
            GradingPart.objects.filter(pk=part_id).update(
                heartbeat=timezone.now() - timedelta(hours=1))
            taken = part_claim(part_id=part_id, token="new-owner")
            assert taken is not None
        server.release(TAKEN_OVER)

        assert slow.get(timeout=PATIENCE) is None  # it stopped quietly ...
        run = Run.objects.get(pk=run_id)
        assert (run.status, GradingPart.objects.get(pk=part_id).token) == (
            RunStatus.GRADING, "new-owner")
        # ... having linked nothing: its entailment judgments are cached, no more.
        assert not NuggetEntailment.objects.exists() and not AnswerEvaluation.objects.exists()
        assert Judgment.objects.filter(kind="entailment").count() == 8
        assert not Judgment.objects.filter(kind="answer").exists()

        outcome = part_grading(part=taken, token="new-owner", judge=make_judge(server),
                               queue_scoring=False)
    assert isinstance(outcome.report, GradeReport)
    assert (outcome.report.entailment_calls, outcome.report.answer_calls) == (0, 3)
    assert asked_once(judge.calls, judge.entailed)  # none judged twice
    run.refresh_from_db()
    assert (run.status, marks(run)) == (RunStatus.GRADED, TOY_MARKS)
    assert Judgment.objects.count() == 11
    assert NuggetEntailment.objects.count() == 8 and AnswerEvaluation.objects.count() == 3


def test_two_processes_linking_the_same_nuggets_at_once_both_succeed(
    personas: Personas, upload: Upload, worker_env: dict[str, str],
    session_judge: ScriptedServer, stop_later: list[subprocess.Popen[Any]],
) -> None:
    session_judge.judge.__dict__.update(judge_from_marked_example().__dict__)
    run = Run.objects.get(pk=upload_toy_ac_run(personas, upload))
    run_grade(run=run, judge=make_judge(session_judge))
    links = dict(NuggetEntailment.objects.values_list("nugget_id", "judgment_id"))
    NuggetEntailment.objects.all().delete()
    nuggets = list(NuggetRecord.objects.filter(pk__in=links).order_by("pk"))
    judgments = Judgment.objects.in_bulk(list(links.values()))

    other = subprocess.Popen([sys.executable, "-m", "tests.grading.link_race"], cwd=REPO,
                             env=worker_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    stop_later.append(other)
    assert other.stdin is not None and other.stdout is not None
    other.stdin.write(json.dumps({"nuggets": links}) + "\n")
    other.stdin.flush()
    # It has read that no link exists and is about to insert its own ...
    ready, _, _ = select.select([other.stdout], [], [], PATIENCE)
    assert ready and other.stdout.readline().strip() == PAUSED_AT_INSERT
    # ... when this process links the same nuggets and commits first.
    _link(NuggetEntailment, "nugget", nuggets, [judgments[links[n.pk]] for n in nuggets],
          "official")
    other.stdin.write("go\n")
    other.stdin.flush()

    assert other.wait(timeout=PATIENCE) == 0, other.stdout.read()
    assert dict(NuggetEntailment.objects.values_list("nugget_id", "judgment_id")) == links
    assert marks(run) == TOY_MARKS


@dataclasses.dataclass(kw_only=True)
class ChunkGate(ScriptedJudge):
    """The toy judge, holding every reply until requests of two questions have come.

    A worker grades one chunk (one question here) at a time and its requests wait
    here: a second question's request can only come from another worker.
    """

    question_of: dict[str, str] = dataclasses.field(default_factory=dict)
    seen: set[str] = dataclasses.field(default_factory=set)

    def __call__(self, request: ChatRequest) -> Step:
        step = super().__call__(request)
        text = request.section("CLAIM") if "CLAIM:" in request.user else \
            request.section("ANSWER")
        with self.lock:
            self.seen.add(self.question_of[text])
            if len(self.seen) >= 2:
                self.release("two questions")
        return step if isinstance(step, NoReply) else dataclasses.replace(
            step, after="two questions")


def test_two_workers_grade_one_run_in_chunks_as_one_worker_would(
    personas: Personas, upload: Upload, worker_env: dict[str, str],
    stop_later: list[subprocess.Popen[Any]], settings: SettingsWrapper,
) -> None:
    run_id = upload_toy_ac_run(personas, upload)
    example = judge_from_marked_example()
    gate = ChunkGate(entailed=example.entailed, correct=example.correct,
                     relevant=example.relevant)
    gate.question_of = {
        **dict(NuggetRecord.objects.filter(run_id=run_id).values_list("text", "qid")),
        **dict(AnswerRecord.objects.filter(run_id=run_id).values_list("answer", "qid"))}
    with ScriptedServer(gate) as server:
        env = {**worker_env, "GRADER_BASE_URL": server.base_url}
        queue = f"pair-{os.getpid()}"
        for name in ("first", "second"):
            stop_later.append(start_worker(env, queues=f"{queue},celery,scoring", name=name))
        # Chunks of at most three nuggets: D001 (3), D002 (2) and D003 (3) apart.
        settings.GRADING_CHUNK_NUGGETS = 3
        sent = [grade_part.apply_async(args=(part,), queue=queue)
                for part in rounds_start(run_ids=[run_id])]
        results: list[dict[str, Any]] = [task.get(timeout=PATIENCE) for task in sent]

    chunks = list(GradingPart.objects.filter(job__run_id=run_id).order_by("number"))
    assert [c.qids for c in chunks] == [["D001"], ["D002"], ["D003"]]
    assert all(c.status == PartStatus.GRADED for c in chunks)
    assert len({c.graded_by for c in chunks}) == 2  # both workers took chunks
    [last] = [r for r in results if r["run_graded"]]  # one chunk ended the run
    AsyncResult(last["scoring_task"]).get(timeout=PATIENCE)
    run = Run.objects.get(pk=run_id)
    assert (run.status, marks(run)) == (RunStatus.SCORED, TOY_MARKS)
    # Every judgment made once and linked once, as by one worker.
    assert sum(r["entailment_calls"] for r in results) == 8
    assert sum(r["answer_calls"] for r in results) == 3
    assert asked_once(gate.calls, gate.entailed)
    assert Judgment.objects.count() == 11
    assert NuggetEntailment.objects.count() == 8 and AnswerEvaluation.objects.count() == 3


def test_a_task_whose_round_was_replaced_or_graded_since_it_was_sent_does_nothing(
    personas: Personas, doubted: Run
) -> None:
    """A batch of edits sends a task per edit, each edit a new round; the last round's task
    does all their work, and the others find their part gone: no grading, no scoring."""
    first = queued_part(doubted)
    last = queued_part(doubted)
    judgments = Judgment.objects.count()

    assert grade_part.apply(args=(first,)).get() is None
    assert Run.objects.get(pk=doubted.pk).status == RunStatus.QUEUED

    graded_at = timezone.now() - timedelta(minutes=5)
    GradingPart.objects.filter(pk=last).update(status=PartStatus.GRADED)
    Run.objects.filter(pk=doubted.pk).update(status=RunStatus.GRADED, graded_at=graded_at)
    assert grade_part.apply(args=(last,)).get() is None

    doubted.refresh_from_db()
    assert (doubted.status, doubted.graded_at) == (RunStatus.GRADED, graded_at)
    assert Judgment.objects.count() == judgments
