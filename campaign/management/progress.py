"""Progress of long management commands (grade, score, judge_eval) on stderr: a tqdm bar on
a terminal, elsewhere a plain line every PLAIN_EVERY seconds and at the end."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, Protocol, Self, TextIO

from tqdm import tqdm

#: Seconds between two plain progress lines.
PLAIN_EVERY = 5.0


class Progress(Protocol):
    """What the commands use of a bar: tqdm's names, so a tqdm bar is one."""

    total: float | None

    def update(self, n: float = 1) -> Any: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...

    def refresh(self) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> Any: ...


class PlainLines:
    """A line like "grading WASEDA-AC-1: 12/26 judgment, 0.8/s, about 17 s left" every
    PLAIN_EVERY seconds while work is done, and one when it ends."""

    def __init__(self, *, desc: str, unit: str, total: float | None, stream: TextIO,
                 every: float = PLAIN_EVERY) -> None:
        self.desc, self.unit, self.total, self.stream, self.every = desc, unit, total, stream, every
        self.n = 0.0
        self.postfix = ""
        self._started = self._said = time.monotonic()
        self._closed = False

    def update(self, n: float = 1) -> None:
        self.n += n
        if time.monotonic() - self._said >= self.every:
            self._say()

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = s

    def refresh(self) -> None:
        """Nothing to redraw: the next line says it."""

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._say(done=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> None:
        self.close()

    def line(self, *, done: bool = False) -> str:
        elapsed = time.monotonic() - self._started
        count = f"{self.n:g}/{self.total:g}" if self.total else f"{self.n:g}"
        parts = [f"{self.desc}: {count} {self.unit}"]
        if self.n and elapsed > 0:
            rate = self.n / elapsed
            parts.append(f"{rate:.2f}/s")
            if not done and self.total and self.total > self.n:
                parts.append(f"about {(self.total - self.n) / rate:.0f} s left")
        if done:
            parts.append(f"done in {elapsed:.0f} s")
        if self.postfix:
            parts.append(self.postfix)
        return ", ".join(parts)

    def _say(self, *, done: bool = False) -> None:
        self._said = time.monotonic()
        print(self.line(done=done), file=self.stream, flush=True)


def progress_bar(*, desc: str, unit: str, total: int | None = None,
                 stream: TextIO | None = None) -> Progress:
    """A bar with done/total, the rate and the time left on a terminal; plain lines else."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return PlainLines(desc=desc, unit=unit, total=total, stream=stream)
    return tqdm(total=total, desc=desc, unit=unit, file=stream, dynamic_ncols=True,
                smoothing=0.1)


class _Bar:
    """Closes its bar when the block it guards ends, however it ends."""

    bar: Progress

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.bar.close()


class RunBar(_Bar):
    """Grading's progress (`grading.judgment_cache.GradingProgress`) for one run: judge calls
    made of those planned, with the rate and the time left."""

    def __init__(self, desc: str, stream: TextIO | None = None) -> None:
        self.bar = progress_bar(desc=desc, unit="judgment", total=0, stream=stream)
        self.plan: dict[str, int] = {}

    def planned(self, kind: str, calls: int) -> None:
        self.plan[kind] = calls
        self.bar.total = sum(self.plan.values())
        self.bar.refresh()

    def judged(self) -> None:
        self.bar.update()

    def close(self) -> None:
        if not self.bar.total:
            self.bar.set_postfix_str("every input was judged before", refresh=False)
        super().close()


class StepBar(_Bar):
    """Scoring's progress (`scoring.track_scoring.ScoringProgress`) as a bar of steps."""

    def __init__(self, desc: str, stream: TextIO | None = None) -> None:
        self.bar = progress_bar(desc=desc, unit="step", stream=stream)

    def planned(self, steps: int) -> None:
        self.bar.total = steps
        self.bar.refresh()

    def done(self, step: str) -> None:
        self.bar.set_postfix_str(step, refresh=False)
        self.bar.update()
