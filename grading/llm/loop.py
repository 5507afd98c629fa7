"""An asyncio event loop in a thread of its own, to which the synchronous grading pipeline hands
batch after batch for the async judge client (docs/judging.md, "Judging a run in batches")."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """A running event loop in a daemon thread, from `start()` until `close()`: `submit` schedules a
    coroutine (a Future back); `close` cancels what runs, awaits `closing` and stops."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def close(self, closing: Coroutine[Any, Any, Any] | None = None) -> None:
        """Cancel what still runs, wait for it to unwind, run `closing`, stop the loop."""

        async def wind_down() -> None:
            here = asyncio.current_task()
            running = [task for task in asyncio.all_tasks() if task is not here]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            if closing is not None:
                await closing

        try:
            asyncio.run_coroutine_threadsafe(wind_down(), self._loop).result()
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()


#: The young generation's size while the collector is kept quiet (`quiet_collector`):
#: CPython's default, 700 allocations, runs a pass every few hundred objects a batch makes.
QUIET_YOUNG_GENERATION = 10_000


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """Keep the garbage collector's pauses short and rare while a judge's loop runs: freeze what
    exists and enlarge the young generation, both restored on exit (docs/judging.md)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], QUIET_YOUNG_GENERATION), *thresholds[1:])
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
