"""A heartbeat thread: one small database write every few seconds until stopped, for
claims and workers alike; a refused beat is logged and retried (docs/operations.md, "Claims")."""

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
    """Calls `beat` every `every` seconds in a daemon thread named `name`, from `start()` until
    `stop()` (at once too if `at_start`), each beat on a fresh database connection closed after."""

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
