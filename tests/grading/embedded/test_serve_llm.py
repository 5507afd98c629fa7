"""`manage.py serve_llm` serves the machine's shared judge until stopped.

The judge is the stand-in of `standin_judge.py` (no model is loaded): the command runs
in a process of its own whose `EmbeddedJudge` makes the stand-in instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from grading.embedded.models import SMALL_MODEL
from grading.embedded.shared import find_judge, record_path
from tests.grading.embedded.test_shared import started, wait_gone

REPO = Path(__file__).resolve().parents[3]

SERVE_LLM = """
import sys
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
from grading.management.commands import serve_llm
from tests.grading.embedded.standin_judge import standin_launch
launch = standin_launch(Path(sys.argv[1]))
serve_llm.EmbeddedJudge = lambda model, var_dir, options: launch(model, var_dir)
call_command("serve_llm", "--model", sys.argv[2], "--port", "0")
"""


def serve_llm(starts: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", SERVE_LLM, str(starts), SMALL_MODEL],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)


def test_serve_llm_serves_the_shared_judge_until_interrupted(tmp_path: Path):
    var_dir, starts = tmp_path / "var", tmp_path / "starts"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "VAR_DIR": str(var_dir)}
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

    assert judge is not None and judge.owner_pid == serving.pid
    assert announced == (f"serving {SMALL_MODEL} at {judge.base_url} with 3 parallel slots "
                         "(Ctrl-C stops)")
    assert (second.returncode, said.strip()) == (0, (
        f"{SMALL_MODEL} is already served at {judge.base_url} (process {serving.pid}); "
        "nothing to do"))
    assert code == 0
    wait_gone(judge.pid)
    assert not record_path(SMALL_MODEL, var_dir=var_dir).exists()
    assert started(starts) == [judge.pid]
