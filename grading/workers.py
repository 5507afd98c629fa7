"""Each Celery worker's heartbeat in the database: who is alive, and since when.

The worker's main process starts a thread at `worker_ready` (config/celery.py) that
writes the worker's row every WORKER_HEARTBEAT_SECONDS, one UPDATE whatever the worker
does, so a busy worker beats as an idle one does. The organisers' stall list shows the
rows; the reaper sends a lost task again only while some worker listening on the
grading queue beats (grading.reaper). A run's own heartbeat (grading.claims) says
whether its grading lives; this one says whether its worker does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection
from django.utils import timezone

from grading.models import WorkerHeartbeat

logger = logging.getLogger(__name__)


def worker_heartbeat_record(*, hostname: str, queues: Sequence[str],
                            started_at: datetime) -> None:
    """Record that the worker `hostname` (consuming `queues`) is alive now."""
    now = timezone.now()
    fields = {"queues": ",".join(queues)[:500], "started_at": started_at, "last_beat": now,
              "stopped_at": None}
    row = WorkerHeartbeat.objects.filter(hostname=hostname[:200])
    # Single statements, no transaction: SQLite refuses at once (no waiting) a transaction
    # that read and then writes while another process writes, as update_or_create would.
    if row.update(**fields):
        return
    try:
        WorkerHeartbeat.objects.create(hostname=hostname[:200], **fields)
    except IntegrityError:  # a worker of the same name wrote it just now
        row.update(**fields)


def worker_heartbeat_stopped(*, hostname: str) -> None:
    """Record that the worker `hostname` stopped cleanly (a dead one just goes quiet)."""
    WorkerHeartbeat.objects.filter(hostname=hostname[:200]).update(stopped_at=timezone.now())


class WorkerHeartbeatThread:
    """The thread that beats for one worker until `stop`."""

    def __init__(self, *, hostname: str, queues: Sequence[str]) -> None:
        self.hostname, self.queues = hostname, list(queues)
        self.started_at = timezone.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="worker-heartbeat",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=settings.WORKER_HEARTBEAT_SECONDS + 10)
        self._write(worker_heartbeat_stopped, hostname=self.hostname)

    def _run(self) -> None:
        while True:
            self._write(worker_heartbeat_record, hostname=self.hostname, queues=self.queues,
                        started_at=self.started_at)
            if self._stop.wait(settings.WORKER_HEARTBEAT_SECONDS):
                return

    @staticmethod
    def _write(write: Callable[..., None], **kwargs: object) -> None:
        try:
            write(**kwargs)
        except DatabaseError as error:
            # The database away for a moment: the next beat tries again.
            logger.warning("worker heartbeat not recorded: %s", error)
        finally:
            # A fresh connection each beat: one the database dropped is never reused.
            connection.close()
