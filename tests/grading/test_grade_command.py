"""`manage.py grade SLUG`: grades the pending AC runs in-process, scores, and shows a
progress bar per run on a terminal (plain lines in logs); stopped, it lets its run go."""

from __future__ import annotations

import io
import re
import signal
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.test import override_settings

from grading.management.commands.grade import INTERRUPTED, TAKEN_OVER
from grading.models import GradingPart, Judgment, PartStatus
from grading.work.part_grading import GradingOutcome
from grading.work.rounds import campaign_grading_queue
from scoring.models import Evaluation
from submissions.models import Run, RunStatus
from tests.grading.fixtures import judge_from_marked_example
from tests.grading.scripted_server import ScriptedServer
from tests.grading.test_grading_claims import PATIENCE, HeldEntailments
from tests.support import REPO, Personas, Upload, upload_toy_ac_run

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    """What the command's stderr is when someone watches it."""

    def isatty(self) -> bool:
        return True


def grade(server: ScriptedServer, slug: str, stderr: io.StringIO) -> str:
    stdout = io.StringIO()
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge",
                           GRADER_TIMEOUT=30):
        call_command("grade", slug, stdout=stdout, stderr=stderr)
    return stdout.getvalue()


def test_it_grades_the_pending_run_and_scores_it(server, toy_ac_run: Run, monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())

    out = grade(server, toy_ac_run.track.campaign.slug, io.StringIO())

    toy_ac_run.refresh_from_db()
    assert toy_ac_run.status == RunStatus.SCORED  # graded, then scored
    # 8 nuggets and 3 answers in tests/data/toy/WASEDA-AC-1, each a distinct input.
    assert Judgment.objects.count() == 11
    assert "WASEDA-AC-1: 8 nuggets, 3/3 answers judged, 11 judge calls" in out
    assert Evaluation.objects.filter(track=toy_ac_run.track).exists()


def test_a_run_taken_over_meanwhile_is_said_so_and_not_counted_failed(
    server, toy_ac_run: Run, monkeypatch
):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    monkeypatch.setattr("grading.management.commands.grade.part_grading",
                        lambda *, part, **kwargs: GradingOutcome(part=part, lost=True))
    errors = io.StringIO()

    out = grade(server, toy_ac_run.track.campaign.slug, errors)

    assert TAKEN_OVER.format(run="WASEDA-AC-1") in out
    assert "failed" not in errors.getvalue()


def test_on_a_terminal_each_run_has_a_bar_with_its_judge_calls(
    server, toy_ac_run: Run, monkeypatch
):
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)

    grade(server, toy_ac_run.track.campaign.slug, io.StringIO())

    drawn = terminal.getvalue()
    # tqdm redraws the line; its last state shows all 11 calls made, a rate and no ETA left.
    assert re.search(r"WASEDA-AC-1: 100%\|.*\| 11/11 \[[0-9:]+<00:00, +[0-9.]+ ?\S*judgment/s\]",
                     drawn), drawn
    # Scoring: one marked run read, the AC track and the PR track scored.
    assert re.search(r"scoring: 100%\|.*\| 3/3 ", drawn), drawn


def test_in_a_log_it_writes_plain_progress_lines_instead_of_a_bar(
    server, toy_ac_run: Run, monkeypatch
):
    log = io.StringIO()  # not a terminal
    monkeypatch.setattr("sys.stderr", log)

    out = grade(server, toy_ac_run.track.campaign.slug, io.StringIO())

    assert "11 judge calls" in out
    written = log.getvalue()
    assert "\r" not in written and "\x1b" not in written  # no bar redrawn in place
    # Lines every few seconds while work goes on (none here: it takes less), and a last
    # one when it ends.
    assert re.fullmatch(r"WASEDA-AC-1: 11/11 judgment, [0-9.]+/s, done in [0-9]+ s\n"
                        r"scoring: 3/3 step, [0-9.]+/s, done in [0-9]+ s, scored track pr\n",
                        written), written


def test_a_second_grading_plans_and_makes_no_calls(server, toy_ac_run: Run, monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    slug = toy_ac_run.track.campaign.slug
    grade(server, slug, io.StringIO())
    calls = sum(server.judge.calls.values())
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)

    stdout = io.StringIO()
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
        call_command("grade", slug, "--all", stdout=stdout)

    assert sum(server.judge.calls.values()) == calls
    assert "WASEDA-AC-1: 8 nuggets, 3/3 answers judged, 0 judge calls" in stdout.getvalue()
    assert "WASEDA-AC-1: 0judgment [00:00, ?judgment/s, every input was judged before]" in (
        terminal.getvalue())


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_grade_stopped_leaves_its_run_failed_for_the_next_one_not_held(
    personas: Personas, upload: Upload, worker_env: dict[str, str], stop: signal.Signals
) -> None:
    run_id = upload_toy_ac_run(personas, upload)
    example = judge_from_marked_example()
    judge = HeldEntailments(entailed=example.entailed, correct=example.correct,
                            relevant=example.relevant)  # its replies never come
    with ScriptedServer(judge) as server:
        grading = subprocess.Popen(
            [sys.executable, "manage.py", "grade", "toy"], cwd=REPO,
            env={**worker_env, "GRADER_BASE_URL": server.base_url},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert judge.arrived.wait(timeout=PATIENCE), "the grade command never judged"
        grading.send_signal(stop)
        grading.communicate(timeout=PATIENCE)

    run = Run.objects.get(pk=run_id)
    assert grading.returncode != 0
    assert (run.status, run.failure_reason) == (RunStatus.FAILED, INTERRUPTED)
    assert GradingPart.objects.get(job__run=run).status == PartStatus.FAILED
    assert campaign_grading_queue(campaign=run.track.campaign) == [run_id]
