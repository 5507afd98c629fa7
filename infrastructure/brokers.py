"""Celery's broker and result store from the broker URL: the embedded broker's folders
under var/, or Redis with bounded waits and a redelivery longer than any task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REDIS_SCHEMES = ("redis://", "rediss://")


def broker_transport_options(url: str, *, celery_dir: Path, redis_socket: dict[str, float],
                             visibility_timeout: int) -> dict[str, Any]:
    """The broker's transport options for `url` (its folders are made where it keeps any)."""
    if url.startswith("filesystem://"):
        # The embedded broker: queues are files under var/, shared by the web process,
        # `manage.py` commands and the local worker; no server to run.
        for folder in ("broker", "processed", "control"):
            (celery_dir / folder).mkdir(parents=True, exist_ok=True)
        return {
            "data_folder_in": str(celery_dir / "broker"),
            "data_folder_out": str(celery_dir / "broker"),
            "processed_folder": str(celery_dir / "processed"),
            "control_folder": str(celery_dir / "control"),
            "store_processed": False,
        }
    if url.startswith(REDIS_SCHEMES):
        # A worker's wait for work (BRPOP) is answered within a second, well inside the
        # socket's bound. Redis has no acknowledgements of its own: a task taken but not
        # acknowledged is put back once `visibility_timeout` old, whether or not its worker
        # still runs it, and a task redelivered while it runs would grade its run twice at
        # once; hence longer than the longest task. A run whose worker vanished is
        # re-queued by the reaper after GRADING_STALE_SECONDS, not by this redelivery.
        return {**redis_socket, "visibility_timeout": visibility_timeout}
    return {}


def default_result_backend(url: str, *, celery_dir: Path) -> str:
    """Redis keeps results where it is the broker; otherwise files under var/."""
    if url.startswith(REDIS_SCHEMES):
        return url
    results = celery_dir / "results"
    results.mkdir(parents=True, exist_ok=True)
    return f"file://{results}"
