"""`manage.py serve_llm` keeps the machine's shared judge up until stopped, or stops it.

The judge is the stand-in of `standin_judge.py` (no model is loaded): the command runs
in a process of its own whose `EmbeddedJudge` makes the stand-in instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from embedded_judge.models import SMALL_MODEL
from embedded_judge.shared import find_judge, record_path
from tests.embedded_judge.test_shared import started, wait_gone

REPO = Path(__file__).resolve().parents[2]

SERVE_LLM = """
import sys
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
from grading.management.commands import serve_llm
from tests.embedded_judge.standin_judge import standin_launch
launch = standin_launch(Path(sys.argv[1]))
serve_llm.EmbeddedJudge = (
    lambda model, var_dir, options, lease, engine: launch(model, var_dir, lease, engine))
call_command("serve_llm", "--model", sys.argv[2], "--port", "0", *sys.argv[3:])
"""


def serve_llm(starts: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", SERVE_LLM, str(starts), SMALL_MODEL, *args],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def environment(var_dir: Path) -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "VAR_DIR": str(var_dir),
            "GRADER_LOCAL_IDLE_SECONDS": "1"}


def test_serve_llm_keeps_the_shared_judge_up_until_interrupted(tmp_path: Path):
    var_dir, starts = tmp_path / "var", tmp_path / "starts"
    env = environment(var_dir)
    serving = serve_llm(starts, env)
    try:
        assert serving.stdout is not None
        announced = serving.stdout.readline().strip()
        judge = find_judge(SMALL_MODEL, var_dir=var_dir)
        second = serve_llm(starts, env)
        said, _ = second.communicate(timeout=60)
    finally:
        serving.send_signal(signal.SIGINT)
        code = serving.wait(timeout=60)

    assert judge is not None and judge.started_by == serving.pid
    assert announced == (f"serving {SMALL_MODEL} at {judge.base_url} with 3 parallel slots, "
                         "prebuilt engine (Ctrl-C: it stops once no other process uses it)")
    assert (second.returncode, said.strip()) == (0, (
        f"{SMALL_MODEL} is already served at {judge.base_url} (process {judge.pid}); "
        "nothing to do"))
    assert code == 0
    # Nobody else uses it: it stops once idle, and withdraws its record.
    wait_gone(judge.pid)
    assert not record_path(SMALL_MODEL, var_dir=var_dir).exists()
    assert started(starts) == [judge.pid]


def test_serve_llm_stop_stops_the_judge_and_its_keeper_says_so(tmp_path: Path):
    var_dir, starts = tmp_path / "var", tmp_path / "starts"
    env = environment(var_dir)
    serving = serve_llm(starts, env)
    assert serving.stdout is not None
    serving.stdout.readline()
    judge = find_judge(SMALL_MODEL, var_dir=var_dir)
    assert judge is not None

    stopping = serve_llm(starts, env, "--stop")
    said, _ = stopping.communicate(timeout=60)
    _, complaint = serving.communicate(timeout=60)

    assert said.strip() == f"stopped {SMALL_MODEL} at {judge.base_url} (process {judge.pid})"
    wait_gone(judge.pid)
    assert serving.returncode == 1
    assert f"the embedded judge (process {judge.pid}) is gone" in complaint
    again = serve_llm(starts, env, "--stop")
    assert again.communicate(timeout=60)[0].strip() == (
        f"{SMALL_MODEL} is not served under {var_dir}")
