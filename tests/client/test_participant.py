"""A participant's campaign through `evalctl` alone, against the live site.

The toy campaign (tests/data/toy, its scores worked out by hand in tests/data/README.md):
alice (WASEDA) and bob (KYOTO) sign in, submit their PR runs, fetch the shared PR runs
after the PR deadline, submit the AC run; the organiser grades (a real Celery worker,
the scripted judge answering as WASEDA-AC-1.marked says) while alice waits with
`status --wait`; the organiser publishes, and alice reads the leaderboards and her run's
scores. Then the same with the demo campaign's runs (demo/runs), three teams, and the
invalid run that is in them on purpose.
"""

from __future__ import annotations

import io
import subprocess
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from celery.result import AsyncResult
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaign.models import Campaign
from scoring.models import Evaluation
from scoring.services import evaluation_publish
from submissions.models import Run
from tests.client.conftest import PASSWORD, Cli, give_site_password
from tests.grading.fixtures import judge_from_marked_example
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import REPO, TOY, Personas, share_pr_runs

DEMO = REPO / "demo"

pytestmark = pytest.mark.django_db(transaction=True)

#: A PR run with a problem on every line but the first (the server's words, as printed).
BAD_PR_RUN = (
    b"D001;1;doc-a;A passage.\n"
    b"D001;1;doc-b;The same rank again.\n"
    b"D001;x;doc-c;A rank that is no number.\n"
    b"D009;1;doc-d;Not a question of the campaign.\n"
)
BAD_PR_PROBLEMS = [
    "line 2, PassageRank: found PassageRank 1 for qID 'D001' again (first on line 1); "
    "expected each rank at most once per question (no ties)",
    "line 3, PassageRank: found PassageRank 'x'; expected an integer from 1 to 20",
    "line 4, qID: found qID 'D009', which is not a question of this campaign; "
    "expected a qID from the campaign's question list",
]


@pytest.mark.worker
def test_a_participant_submits_waits_for_grading_and_reads_the_scores(
    personas: Personas, tracks: dict[str, Any], cli_of: Callable[[str], Cli],
    celery_worker: subprocess.Popen[bytes], session_judge: ScriptedServer,
) -> None:
    script = session_judge.judge
    script.__dict__.update(judge_from_marked_example().__dict__)
    alice, bob = cli_of("alice"), cli_of("bob")
    give_site_password(personas.participant_a)

    signed_in = alice("login", "--site", alice.site.base_url, "--username", "alice",
                      "--password-stdin", stdin=PASSWORD + "\n")
    assert signed_in.code == 0, signed_in.err
    assert f"signed in to {alice.site.base_url} as alice" in signed_in.out
    assert "toy: participant, team WASEDA" in signed_in.out
    assert alice.file_mode() == 0o600
    bob.sign_in_with_token(personas, "participant_b")

    kyoto = bob("submit", "toy", "pr", str(TOY / "KYOTO-PG-1"))
    assert kyoto.code == 0, kyoto.err
    assert "KYOTO-PG-1 accepted (valid): 4 record(s) for 3 question(s)" in kyoto.out
    assert "the format check found no problem" in kyoto.err
    size = (TOY / "KYOTO-PG-1").stat().st_size
    assert f"uploading KYOTO-PG-1 [{'#' * 30}] 100% {size} B/{size} B" in kyoto.err
    waseda = alice("submit", "toy", "pr", str(TOY / "WASEDA-PO-1"))
    assert waseda.code == 0, waseda.err

    bad = alice.home / "WASEDA-PO-2"
    bad.write_bytes(BAD_PR_RUN)
    refused = alice("submit", "toy", "pr", str(bad))
    assert refused.code == 1
    assert f"error: {bad}: 3 problem(s) found before upload; nothing was sent" in refused.err
    assert refused.problem_lines() == BAD_PR_PROBLEMS
    assert "uploading" not in refused.err
    assert not Run.objects.filter(name="WASEDA-PO-2").exists()

    too_early = alice("download-shared", "toy")
    assert too_early.code == 1
    assert "error: PR runs of toy are shared with all teams after" in too_early.err
    assert "(HTTP 404)" in too_early.err
    share_pr_runs(personas)
    shared = alice("download-shared", "toy", "-o", "shared")
    assert shared.code == 0, shared.err
    assert "2 shared PR run(s) of toy in shared: " in shared.out
    for name in ("KYOTO-PG-1", "WASEDA-PO-1"):
        assert (alice.home / "shared" / name).read_bytes() == (TOY / name).read_bytes()

    answers = alice("submit", "toy", "ac", str(TOY / "WASEDA-AC-1"),
                    "--description", "nuggets from both PR runs")
    assert answers.code == 0, answers.err
    assert "WASEDA-AC-1 accepted (valid): 8 record(s) for 3 question(s)" in answers.out

    # The judge holds its answers until alice's `status --wait` has seen the run grading.
    script.hold_answers = True
    waiting: subprocess.Popen[str] | None = None
    try:
        graded = personas.client("organiser").post("/api/v1/campaigns/toy/grading/")
        [task] = graded.json()["tasks"]
        assert script.answer_arrived.wait(timeout=120), "the worker never asked the judge"
        waiting = alice.popen("status", "toy", "--wait", "--interval", "0.2",
                              "--timeout", "300")
        assert waiting.stderr is not None
        assert waiting.stderr.readline() == "waiting for WASEDA-AC-1 (grading)\n"
        script.release_answers()
        out, err = waiting.communicate(timeout=300)
    finally:
        script.release_answers()
        if waiting is not None and waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 0, err
    [ac_row] = [line.split() for line in out.splitlines() if "WASEDA-AC-1" in line]
    # Graded; scored too if the scoring that grading queued was quicker than the look.
    assert ac_row[:3] == ["WASEDA-AC-1", "WASEDA", "ac"] and ac_row[3] in ("graded", "scored")

    grading: dict[str, Any] = AsyncResult(task).get(timeout=120)
    scoring: AsyncResult[Any] = AsyncResult(grading["scoring_task"])
    scoring.get(timeout=120)
    for evaluation in Evaluation.objects.filter(track__campaign=personas.campaign):
        evaluation_publish(evaluation=evaluation, user=personas.organiser)

    boards = alice("scores", "toy")
    assert boards.code == 0, boards.err
    # tests/data/README.md, by hand: accuracy 2/3, nugget precision 4/9, R_O 0.15, R_U
    # 0.85, HMR 0.255, ECE 0.38333, Brier 0.2625; nDCG@10 0.806574 and 0.306574, Q-measure
    # 0.75 and 0.25, nERR@10 0.875 and 0.375. The star marks alice's team.
    rows = leaderboard_rows(boards.out)
    assert rows["WASEDA-AC-1"] == ("*", "WASEDA", {
        "accuracy": "0.6667", "nugget_precision": "0.4444", "r_o": "0.1500", "r_u": "0.8500",
        "hmr": "0.2550", "ece": "0.3833", "brier": "0.2625"})
    own_pr, other_pr = rows["WASEDA-PO-1"], rows["KYOTO-PG-1"]
    assert own_pr[:2] == ("*", "WASEDA") and other_pr[:2] == ("", "KYOTO")
    for measure, ours, theirs in [("ndcg@10", "0.8066", "0.3066"),
                                  ("q_measure", "0.7500", "0.2500"),
                                  ("nerr@10", "0.8750", "0.3750")]:
        assert (own_pr[2][measure], other_pr[2][measure]) == (ours, theirs)
    assert "* your team (WASEDA)" in boards.out

    own = alice("scores", "toy", "--run", "WASEDA-AC-1")
    assert own.code == 0, own.err
    means, per_question = own.out.split("per question:")
    mean_of = dict(line.split() for line in means.splitlines()[2:])
    assert (mean_of["accuracy"], mean_of["hmr"]) == ("0.6667", "0.2550")
    # Per question: D001 and D003 correct, nugget precision 2/3, 0 and 2/3.
    header, *by_qid = (line.split() for line in per_question.strip().splitlines())
    table = {cells[0]: dict(zip(header[1:], cells[1:], strict=True)) for cells in by_qid}
    assert {qid: (row["correct"], row["nugget_precision"]) for qid, row in table.items()} == {
        "D001": ("1.0000", "0.6667"), "D002": ("0.0000", "0.0000"),
        "D003": ("1.0000", "0.6667")}


@pytest.mark.worker
def test_the_demo_runs_go_in_through_evalctl_and_come_out_on_the_leaderboards(
    cli_of: Callable[[str], Cli], celery_worker: subprocess.Popen[bytes],
    session_judge: ScriptedServer,
) -> None:
    # The scripted judge's defaults: the numbers are the toy campaign's test; this one is
    # about the demo's files.
    session_judge.judge.__dict__.update(ScriptedJudge().__dict__)
    call_command("load_campaign", str(DEMO / "campaign.yaml"), stdout=io.StringIO())
    campaign = Campaign.objects.get(slug="demo-movies")
    now = timezone.now()
    campaign.topics_release, campaign.pr_due = now - timedelta(days=1), now + timedelta(days=1)
    campaign.ac_due, campaign.results_release = now + timedelta(days=7), now + timedelta(days=30)
    campaign.full_clean()
    campaign.save()
    teams = {"WASEDA": "alice", "KYOTO": "bob", "TSUKUBA": "carol"}
    clis = {team: cli_of(user) for team, user in teams.items()}
    for team, cli in clis.items():
        assert cli("login", "--site", cli.site.base_url, "--token", token_of(teams[team])).code == 0

    for team, run in [("WASEDA", "WASEDA-PO-1"), ("KYOTO", "KYOTO-PG-1"),
                      ("TSUKUBA", "TSUKUBA-PG-1")]:
        submitted = clis[team]("submit", "demo-movies", "pr", str(DEMO / "runs" / run))
        assert submitted.code == 0, submitted.err
    campaign.pr_due = timezone.now() - timedelta(seconds=1)
    campaign.save()
    for team, run in [("WASEDA", "WASEDA-AC-1"), ("KYOTO", "KYOTO-AC-1"),
                      ("TSUKUBA", "TSUKUBA-AC-1")]:
        submitted = clis[team]("submit", "demo-movies", "ac", str(DEMO / "runs" / run))
        assert submitted.code == 0, submitted.err

    # demo/runs/README.md: five problems, on lines 2, 10, 16, 26 and 48. Line 26 cites a
    # rank TSUKUBA-PG-1 did not return: the server's to know, so only it says so.
    invalid = str(DEMO / "runs" / "TSUKUBA-AC-2")
    checked = clis["TSUKUBA"]("submit", "demo-movies", "ac", invalid)
    validated = clis["TSUKUBA"]("submit", "demo-movies", "ac", invalid, "--no-check")
    assert checked.code == validated.code == 1
    lines = [problem.split(",")[0] for problem in validated.problem_lines()]
    assert lines == ["line 2", "line 10", "line 16", "line 26", "line 48"]
    [only_the_server] = [p for p in validated.problem_lines() if p.startswith("line 26,")]
    assert checked.problem_lines() == [p for p in validated.problem_lines()
                                       if p != only_the_server]
    assert only_the_server.startswith("line 26, PassageRank: found PassageRank 9 of "
                                      "TSUKUBA-PG-1 for qID 'M005', which that run did not")

    organiser = APIClient()
    organiser.credentials(HTTP_AUTHORIZATION=f"Token {token_of('olga')}")
    tasks = organiser.post("/api/v1/campaigns/demo-movies/grading/").json()["tasks"]
    assert len(tasks) == 3
    waited = clis["WASEDA"]("status", "--wait", "--interval", "0.2", "--timeout", "600")
    assert waited.code == 0, waited.err
    [row] = [line.split() for line in waited.out.splitlines() if "WASEDA-AC-1" in line]
    assert row[3] in ("graded", "scored")
    results: list[dict[str, Any]] = [AsyncResult(task).get(timeout=120) for task in tasks]
    for result in results:
        if result.get("scoring_task"):
            AsyncResult(result["scoring_task"]).get(timeout=120)
    for evaluation in Evaluation.objects.filter(track__campaign=campaign):
        # force: what the judge doubted (the gold-answer check) is not this test's point.
        evaluation_publish(evaluation=evaluation, user=User.objects.get(username="olga"),
                           force=True)

    boards = clis["WASEDA"]("scores", "demo-movies")
    assert boards.code == 0, boards.err
    rows = leaderboard_rows(boards.out)
    assert set(rows) == {"WASEDA-AC-1", "KYOTO-AC-1", "TSUKUBA-AC-1",
                         "WASEDA-PO-1", "KYOTO-PG-1", "TSUKUBA-PG-1"}
    assert {run for run, (mark, _, _) in rows.items() if mark} == {"WASEDA-AC-1",
                                                                   "WASEDA-PO-1"}
    assert all(0 <= float(row[2]["hmr"]) <= 1 for run, row in rows.items() if "-AC-" in run)


def token_of(username: str) -> str:
    token, _ = Token.objects.get_or_create(user=User.objects.get(username=username))
    return token.key


def leaderboard_rows(out: str) -> dict[str, tuple[str, str, dict[str, str]]]:
    """Run -> (its mark, its team, measure -> value) of the leaderboards printed."""
    rows = {}
    measures: list[str] = []
    for line in out.splitlines():
        cells = line.split()
        if cells[:3] == ["#", "RUN", "TEAM"]:
            measures = cells[3:]
        elif cells and cells[0].isdigit():
            mark = "*" if cells[1] == "*" else ""
            run, team, *values = cells[2:] if mark else cells[1:]
            rows[run] = (mark, team, dict(zip(measures, values, strict=True)))
    return rows
