"""The service's Celery app with the stand-in judge in place of llama.cpp, for
`test_worker_judge.py`: `celery -A tests.embedded_judge.standin_worker worker`.

`STANDIN_STARTS` names the file each stand-in start appends its pid to.
"""

from __future__ import annotations

import os
from pathlib import Path

from config.celery import app
from embedded_judge import shared
from tests.embedded_judge.standin_judge import standin_launch

# `shared_judge` looks the default launcher up when it is called, so this reaches the
# worker's main process and every child it forks.
shared.launch_packaged = standin_launch(Path(os.environ["STANDIN_STARTS"]))


@app.task(name="tests.embedded_judge_in_use")
def embedded_judge_in_use() -> dict[str, object]:
    """Which judge this child grades with, as `judge_config` gives it, and who asks."""
    from grading.setup import judge_config

    config = judge_config()
    return {"child": os.getpid(), "base_url": config.base_url, "model": config.model}
