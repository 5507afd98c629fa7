"""The judge's pure packages import nothing from Django."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

PROBE = """
import sys
import embedded_judge.models, embedded_judge.server
import grading.llm.client, grading.llm.inputs, grading.llm.parsing
import grading.llm.prompts, grading.llm.schemas
django = sorted(name for name in sys.modules if name.split(".")[0] == "django")
print(",".join(django))
"""


def test_the_judge_packages_import_without_django() -> None:
    env = {key: value for key, value in os.environ.items()
           if key != "DJANGO_SETTINGS_MODULE"}
    probe = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env,
                           capture_output=True, text=True, check=False)

    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == ""
