"""Which judge grades: vLLM (or any OpenAI-compatible server) or the embedded llama.cpp one.

`GRADER_BASE_URL` set: that server. Unset: the embedded judge (DESIGN.md section 3),
started once per process on 127.0.0.1 with the packaged model `GRADER_LOCAL_MODEL`.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from django.conf import settings

from campaign.models import Track
from grading.judge import OpenAIJudge
from grading.llm.client import JudgeConfig

_lock = threading.Lock()
_embedded: dict[str, tuple[str, str, int]] = {}


def _embedded_server() -> tuple[str, str, int]:
    """(base_url, model, slots) of this process's embedded judge, starting it on first use."""
    from grading.embedded.server import EmbeddedJudge

    with _lock:
        name = settings.GRADER_LOCAL_MODEL
        if name not in _embedded:
            server = EmbeddedJudge(name, var_dir=Path(settings.VAR_DIR))
            server.start()  # installs the packaged model on first use
            atexit.register(server.stop)
            _embedded[name] = (server.base_url, server.model, server.options.n_parallel)
        return _embedded[name]


def judge_config() -> JudgeConfig:
    if settings.GRADER_BASE_URL:
        return _config(settings.GRADER_BASE_URL, settings.GRADER_MODEL or "default")
    base_url, model, slots = _embedded_server()
    # No more requests in flight than the server decodes at once: on a slow CPU a request
    # queued behind a busy slot spends its whole timeout waiting, is retried, and the
    # retry queues again.
    return _config(base_url, model, concurrency=min(settings.GRADER_CONCURRENCY, slots))


def _config(base_url: str, model: str, concurrency: int | None = None) -> JudgeConfig:
    """A judge at `base_url` serving `model`, with the GRADER_* key, concurrency, timeout."""
    return JudgeConfig(
        base_url=base_url, model=model, api_key=settings.GRADER_API_KEY,
        concurrency=concurrency or settings.GRADER_CONCURRENCY, timeout=settings.GRADER_TIMEOUT,
    )


def official_judge() -> OpenAIJudge:
    return OpenAIJudge(judge_config())


def second_judge(track: Track) -> OpenAIJudge | None:
    """The track's second judge (agreement only), if one is configured."""
    if not (track.second_judge_base_url and track.second_judge_model):
        return None
    return OpenAIJudge(_config(track.second_judge_base_url, track.second_judge_model))
