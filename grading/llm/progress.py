"""Is the judge's server still working? Its Prometheus work counters say: while they rise, a
late reply is still coming (docs/judging.md, "Slow judges and timeouts")."""

from __future__ import annotations

import asyncio
import time

from grading.llm.transport import NoAnswer, Transport

#: The counters that rise while a server computes: llama.cpp's and vLLM's names.
WORK_COUNTERS = frozenset({
    "llamacpp:n_decode_total", "llamacpp:prompt_tokens_total",
    "llamacpp:tokens_predicted_total",
    "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
    "vllm:num_preemptions_total",
})

#: A reading this recent (seconds) answers for every late call that asks: one GET, not
#: one each. Shorter where calls wait less (a reading must be newer than a call's last).
FRESH_FOR = 1.0


def work_done(metrics: str) -> float | None:
    """The sum of the work counters in a Prometheus text exposition; None without any."""
    total, found = 0.0, False
    for line in metrics.splitlines():
        if not line or line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in WORK_COUNTERS:
            try:
                total += float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                continue
            found = True
    return total if found else None


class ServerProgress:
    """Reads the server's work counters for late calls; None where it publishes none."""

    def __init__(self, http: Transport, url: str, *, fresh_for: float = FRESH_FOR) -> None:
        self._http = http
        self._url = url
        self._fresh_for = fresh_for
        self._lock = asyncio.Lock()
        self._last: tuple[float, float | None] | None = None

    async def reading(self) -> float | None:
        """The work done so far, read at most once per `fresh_for` whoever asks."""
        async with self._lock:
            now = time.monotonic()
            if self._last is not None and now - self._last[0] < self._fresh_for:
                return self._last[1]
            try:
                answer = await self._http.get(self._url)
            except NoAnswer:
                value = None
            else:
                value = (work_done(answer.body.decode("utf-8", "replace"))
                         if answer.status == 200 else None)
            self._last = (time.monotonic(), value)
            return value
