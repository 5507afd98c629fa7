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


#: The young generation's size while the collector is kept quiet (`quiet_collector`):
#: CPython's default, 700 allocations, runs a pass every few hundred objects a batch makes.
QUIET_YOUNG_GENERATION = 10_000


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """Keep the garbage collector's pauses short and rare while a judge's loop runs.

    A collection holds the GIL: while it runs, the loop's thread cannot read a reply or
    send the next request, and the judge's slots stand idle. A full collection walks
    every object in the process (with Django and a run's records loaded, 130-170 ms;
    bench/bench_grading.py saw 7 of them, 0.9 s, in a 30 s grading). So the objects
    that exist on entry are frozen (`gc.freeze`: left out of every pass; what is made
    meanwhile is collected as usual), and the young generation is larger, so that
    passes come a tenth as often and full ones hardly at all (0.2 s of pauses in all).
    On exit the threshold is restored and the frozen objects are handed back to the
    collector. Both are the process's: a grading in another thread that leaves first
    restores them early, which costs only the pauses, never memory or correctness.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], QUIET_YOUNG_GENERATION), *thresholds[1:])
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
