"""Work sent by task name finds its task in any process: once Django has set up, every name
grading sends is registered, though nothing imported a tasks module."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO

REGISTERED = """
import django
django.setup()
from celery import current_app
from grading.work import dispatch
names = [dispatch.GRADE_PART, dispatch.GRADE_TESTBANK_ITEMS, dispatch.GENERATE_TESTBANK,
         dispatch.SCORE_CAMPAIGN]
print(sorted(name for name in names if name not in current_app.tasks))
"""


def test_every_task_grading_sends_by_name_is_registered_once_django_is_set_up() -> None:
    found = subprocess.run([sys.executable, "-c", REGISTERED], cwd=REPO, capture_output=True,
                           text=True, timeout=120, check=False,
                           env={"DJANGO_SETTINGS_MODULE": "config.settings",
                                "PATH": "/usr/bin:/bin"})

    assert found.returncode == 0, found.stderr[-2000:]
    assert found.stdout.strip() == "[]"
