"""An asyncio event loop in a thread of its own, for callers that are not async.

The grading pipeline is synchronous (Django's ORM) and the judge client asynchronous.
With the client on a loop of its own, the pipeline hands it batch after batch and stores
one batch's judgments while the next ones are in flight, all on one connection pool and
under one cap on the requests in flight (grading.judge.OpenAIJudge.session).
"""

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
    """A running event loop in a daemon thread, from `start()` until `close()`.

    `submit` schedules a coroutine on it and returns a `concurrent.futures.Future`.
    `close` cancels what still runs, lets it unwind, runs the `closing` coroutine given
    (a client's aclose) and stops the thread.
    """

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


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Leave the objects that exist now out of the garbage collector's passes until exit.

    A full collection holds the GIL while it walks every object in the process: with
    Django and the run's records loaded, 130-170 ms, during which the loop's thread
    cannot read a reply or send the next request, and each of the judge's slots stands
    idle (bench/bench_grading.py: 7 such pauses, 0.9 s, in a 30 s grading). Frozen
    (`gc.freeze`), the objects from before are skipped; what is made meanwhile is
    collected as usual, and at exit everything is handed back to the collector. The
    freeze is the process's: a grading in another thread that leaves first unfreezes
    early, which costs only the pauses, never memory or correctness.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
