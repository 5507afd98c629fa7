"""A real prefork Celery worker shares one embedded judge among its children.

The worker's main process starts the judge (worker_init), its children find it through
the record, a child replaced by the pool takes nothing down, and the judge, used for as
long as the worker runs, stops once the worker has gone and it has been idle. The judge
is the stand-in of `standin_judge.py`, so no model is loaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from django.conf import settings

from config.celery import app
from embedded_judge.shared import find_judge, record_path
from tests.embedded_judge.test_shared import started, wait_gone

REPO = Path(__file__).resolve().parents[2]


def test_a_worker_s_children_share_the_judge_its_main_process_started(tmp_path: Path):
    starts = tmp_path / "starts"
    # The worker shares this process's VAR_DIR (so its broker): a model name of its own
    # keeps its judge apart from any other under that VAR_DIR.
    model = f"standin-{uuid.uuid4().hex[:8]}"
    queue = f"embedded-judge-{os.getpid()}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "VAR_DIR": str(settings.VAR_DIR), "GRADER_BASE_URL": "",
           "GRADER_LOCAL_MODEL": model, "STANDIN_STARTS": str(starts),
           "GRADER_LOCAL_IDLE_SECONDS": "1"}
    # Two children, each replaced after one task: four tasks see at least three children.
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "tests.embedded_judge.standin_worker",
         "worker", "--pool=prefork", "--concurrency=2", "--max-tasks-per-child=1",
         "--loglevel=WARNING", "--without-gossip", "--without-mingle", "-Q", queue,
         "--hostname", f"{queue}@%h"],
        cwd=REPO, env=env)
    try:
        results = [app.send_task("tests.embedded_judge_in_use", queue=queue)
                   for _ in range(4)]
        used = [result.get(timeout=120) for result in results]
        judge = find_judge(model, var_dir=settings.VAR_DIR)
    finally:
        worker.terminate()  # a warm shutdown, as Ctrl-C or `docker stop` gives
        worker.wait(timeout=60)

    assert judge is not None and judge.started_by == worker.pid
    assert started(starts) == [judge.pid]
    assert {(use["base_url"], use["model"]) for use in used} == {(judge.base_url, model)}
    children = {use["child"] for use in used}
    assert len(children) >= 3 and worker.pid not in children
    wait_gone(judge.pid)
    assert not record_path(model, var_dir=settings.VAR_DIR).exists()
