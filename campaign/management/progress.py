"""Progress bars for long management commands (grade, score, the model download).

tqdm draws them on stderr, so they never mix with a command's report on stdout; when
stderr is not a terminal (CI logs, cron, a pipe) they stay silent.
"""

from __future__ import annotations

import sys
from typing import Never, Self, TextIO

from tqdm import tqdm


class _Bar:
    """Closes its bar when the block it guards ends, however it ends."""

    bar: tqdm[Never]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.bar.close()


def progress_bar(*, desc: str, unit: str, total: int | None = None,
                 stream: TextIO | None = None) -> tqdm[Never]:
    """A bar showing done/total, the rate and the time left; off unless `stream` is a TTY."""
    return tqdm(total=total, desc=desc, unit=unit, file=stream or sys.stderr, disable=None,
                dynamic_ncols=True, smoothing=0.1)


class RunBar(_Bar):
    """Grading's progress (`grading.services.GradingProgress`) for one run: judge calls
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
    """Scoring's progress (`scoring.services.ScoringProgress`) as a bar of steps."""

    def __init__(self, desc: str, stream: TextIO | None = None) -> None:
        self.bar = progress_bar(desc=desc, unit="step", stream=stream)

    def planned(self, steps: int) -> None:
        self.bar.total = steps
        self.bar.refresh()

    def done(self, step: str) -> None:
        self.bar.set_postfix_str(step, refresh=False)
        self.bar.update()
