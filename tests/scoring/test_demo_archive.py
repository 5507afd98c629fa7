"""CI's check of the results archive on the demo campaigns:
`make demo`'s steps, as the Makefile runs them, on demo/ (R2C2) and demo/rubric/
(RUBRIC), with a scripted judge in place of the LLM (deterministic, and seconds instead
of an hour); then `export_campaign` and `python -m scoring.replay` on each archive,
which must reproduce every published number."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings

from campaign.models import Campaign
from submissions.formats.ac_run import parse_ac_run
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.scoring.archive_support import export, publish_all
from tests.support import REPO

pytestmark = pytest.mark.django_db

DEMO = REPO / "demo"
AC_RUNS = ["KYOTO-AC-1", "TSUKUBA-AC-1", "WASEDA-AC-1"]


class GradesByContent(dict[tuple[str, str], tuple[int, str]]):
    """A self-rating for every (passage, item): 0..5 by a checksum of the two texts, so
    that some passages reach min_grade and some do not, the same on every run."""

    def get(self, pair: tuple[str, str], default: Any = None) -> tuple[int, str]:
        return zlib.crc32("|".join(pair).encode()) % 6, "scripted"


def demo_judge() -> ScriptedJudge:
    """Every other answer of each demo AC run correct, its first two nuggets relevant,
    and every nugget but the last of a block entailed: the marks use all of B, R and N,
    and the PR qrels come out non-empty. RUBRIC: grades by `GradesByContent`, and two
    nuggets drafted for FH05, the demo query without items."""
    script = ScriptedJudge()
    script.rubric.grades = GradesByContent()
    query = dict(line.split(";", 1) for line in
                 (DEMO / "rubric" / "queries.txt").read_text().splitlines() if line)["FH05"]
    script.rubric.banks[query] = [{"text": "The film was released in colour."},
                                  {"text": "It won an Academy Award."}]
    for name in AC_RUNS:
        parsed = parse_ac_run(io.BytesIO((DEMO / "runs" / name).read_bytes()))
        for number, block in enumerate(parsed.records):
            texts = [nugget.text for nugget in block.nuggets]
            script.correct[block.answer] = number % 2 == 0
            script.relevant[block.answer] = texts[:2]
            for text in texts[-1:]:
                script.entailed[text] = len(texts) < 3
    return script


def make_demo(server: ScriptedServer) -> None:
    """The Makefile's `demo` target, up to `serve`, with the scripted judge."""
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    # The Makefile starts its worker only once this is done: the tasks the settled edits
    # send wait unheard, and `grade` grades the runs they queued. A session's live worker
    # (tests/conftest.py) would race `grade` for them, so nothing is sent here.
    unheard = mock.patch("grading.work.dispatch._send_on_commit",
                         lambda name, **options: f"unheard {name}")
    with unheard, override_settings(GRADER_BASE_URL=server.base_url,
                                    GRADER_MODEL="scripted-judge", GRADER_TIMEOUT=30):
        call_command("load_campaign", str(DEMO / "campaign.yaml"), **quiet)
        call_command("submit_runs", "demo-movies", "--as", "olga", "--keep-going",
                     *sorted(str(p) for p in (DEMO / "runs").glob("*-P[GO]-*")),
                     *sorted(str(p) for p in (DEMO / "runs").glob("*-AC-*")), **quiet)
        call_command("grade", "demo-movies", **quiet)
        labels = ("demo-movies", "--as", "olga", "--labels", str(DEMO / "blind-labels.jsonl"))
        call_command("blind_labels", *labels, "--draw", "entailment:40", "--draw",
                     "answer:22", "--seed", "2026", "--settle-escalated", **quiet)
        call_command("grade", "demo-movies", **quiet)
        call_command("blind_labels", *labels, "--settle-escalated", **quiet)
        call_command("grade", "demo-movies", **quiet)
        # Every escalated judgment settled: published without --force, as the Makefile does.
        call_command("publish_leaderboards", "demo-movies", "--as", "olga", **quiet)
        call_command("load_campaign", str(DEMO / "rubric" / "campaign.yaml"), **quiet)
        call_command("testbank_generate", "demo-rubric", "--n", "2", **quiet)
        call_command("submit_runs", "demo-rubric", "--as", "olga",
                     *sorted(str(p) for p in (DEMO / "rubric" / "runs").iterdir()), **quiet)
        call_command("grade", "demo-rubric", **quiet)
    olga = User.objects.get(username="olga")
    # `publish_leaderboards --force`, as the Makefile publishes the RUBRIC campaign.
    assert publish_all(Campaign.objects.get(slug="demo-rubric"), olga)


@pytest.mark.parametrize(("slug", "boards"), [("demo-movies", "(ac, pr)"),
                                              ("demo-rubric", "(ranking, response)")])
def test_the_demo_archives_replay_to_every_published_number(
    slug: str, boards: str, tmp_path: Path
) -> None:
    with ScriptedServer(demo_judge()) as server:
        make_demo(server)
    archive = export(slug, tmp_path / f"{slug}.zip")
    replayed = subprocess.run([sys.executable, "-m", "scoring.replay", str(archive)],
                              cwd=REPO, capture_output=True, text=True, timeout=600,
                              check=False)
    print(replayed.stdout)  # CI's log shows what was checked
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"leaderboard(s) match {boards}" in replayed.stdout
    assert "DIFFERS" not in replayed.stdout
    if slug == "demo-movies":
        assert_labels_say_how_they_were_decided(archive)
        assert_the_ac_hsd_is_on_hmr(archive)


def assert_the_ac_hsd_is_on_hmr(archive: Path) -> None:
    """The AC leaderboard is ranked by HMR, and its Tukey HSD tests HMR: each pair's
    difference is the difference of the two runs' HMR."""
    with zipfile.ZipFile(archive) as members:
        name = next(n for n in members.namelist() if n.endswith("leaderboards/ac.json"))
        board = json.loads(members.read(name))
    hmr = {row["run"]: row["hmr"] for row in board["rows"]}
    statistics = board["statistics"]
    assert (statistics["hsd_measure"], statistics["measure"]) == ("hmr", "nugget_precision")
    assert len(statistics["hsd"]) == 3
    for pair in statistics["hsd"]:
        assert pair["difference"] == pytest.approx(hmr[pair["a"]] - hmr[pair["b"]], abs=1e-12)


def assert_labels_say_how_they_were_decided(archive: Path) -> None:
    """The archived AC leaderboard says per kind who decided its labels, and the parts
    add up: every judgment once, and each sampled kind under the guarantee's terms."""
    with zipfile.ZipFile(archive) as members:
        name = next(n for n in members.namelist() if n.endswith("leaderboards/ac.json"))
        labels = json.loads(members.read(name))["labels"]
    assert set(labels) == {"entailment", "answer"}
    for origin in labels.values():
        assert origin["accepted"] + origin["by_people"] + origin["by_judge"] == \
            origin["judgments"]
        assert origin["by_people"] > 0 and origin["review_below"] is None
        assert {"target": 0.9, "risk": 0.1}.items() <= origin["guarantee"].items()
    assert labels["entailment"]["guarantee"]["sample"] == 40
