"""Each Celery worker's heartbeat in the database, written by its main process whatever it
does: who is alive, and since when (docs/operations.md, "Worker heartbeats")."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection
from django.utils import timezone

from grading.models import WorkerHeartbeat
from grading.work.beating import Heartbeat

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
    """The thread that beats for one worker until `stop` (grading.work.beating)."""

    def __init__(self, *, hostname: str, queues: Sequence[str]) -> None:
        self.hostname = hostname
        started_at = timezone.now()
        self._heartbeat = Heartbeat(
            lambda: worker_heartbeat_record(hostname=hostname, queues=queues,
                                            started_at=started_at),
            every=settings.WORKER_HEARTBEAT_SECONDS, name="worker-heartbeat", at_start=True)

    def start(self) -> None:
        self._heartbeat.start()

    def stop(self) -> None:
        self._heartbeat.stop(timeout=settings.WORKER_HEARTBEAT_SECONDS + 10)
        try:
            worker_heartbeat_stopped(hostname=self.hostname)
        except DatabaseError as error:
            # The database away as the worker stops: its beats just end, as a dead one's.
            logger.warning("worker stop not recorded: %s", error)
        finally:
            connection.close()
