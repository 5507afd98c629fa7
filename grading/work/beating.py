"""A heartbeat thread: one small database write every few seconds, until stopped.

Both heartbeats beat through it: a claim's (grading.work.claims), which says that a run's or
a chunk's grading lives, and a worker's (grading.work.workers), which says that the worker
does. A beat the database refuses (it restarted, a proxy dropped the connection, SQLite
was busy) is logged and the next beat tries again: a heartbeat thread that died on one
error would leave a living grader looking dead, and the reaper would send its work to
another worker while it still grades.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)

#: The shortest pause between beats, whatever the interval asked for: a heartbeat never
#: spins on the database (a test's GRADING_STALE_SECONDS of -1 asks for no pause at all).
SHORTEST_PAUSE = 0.05


class Heartbeat:
    """Calls `beat` every `every` seconds in a daemon thread named `name`, from `start()`
    until `stop()`; at once too if `at_start`.

    Each beat runs on a fresh database connection, closed after it: this thread's
    connection is its own, and one the database dropped between beats is never reused.
    """

    def __init__(self, beat: Callable[[], None], *, every: float, name: str,
                 at_start: bool = False) -> None:
        self._beat, self._every, self._at_start = beat, max(every, SHORTEST_PAUSE), at_start
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop beating; wait for a beat under way to end (at most `timeout` seconds)."""
        self._stopping.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        if self._at_start:
            self._beat_once()
        while not self._stopping.wait(self._every):
            self._beat_once()

    def _beat_once(self) -> None:
        try:
            self._beat()
        except DatabaseError as error:
            logger.warning("%s: beat not recorded, the next one tries again: %s",
                           self._thread.name, error)
        finally:
            connection.close()
