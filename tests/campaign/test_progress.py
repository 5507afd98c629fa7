"""Progress of long commands in a log: plain lines every few seconds, and one at the end."""

from __future__ import annotations

import io

import pytest

from campaign.management import progress
from campaign.management.progress import PlainLines, progress_bar


def test_plain_lines_come_every_few_seconds_and_once_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    bar = PlainLines(desc="WASEDA-AC-1", unit="judgment", total=10, stream=out, every=5)

    bar.update()
    clock[0] += 4
    bar.update()
    assert out.getvalue() == ""  # under five seconds: nothing yet
    clock[0] += 2
    bar.update()
    assert out.getvalue() == "WASEDA-AC-1: 3/10 judgment, 0.50/s, about 14 s left\n"

    clock[0] += 2
    bar.close()
    bar.close()  # once only
    assert out.getvalue().splitlines()[1:] == ["WASEDA-AC-1: 3/10 judgment, 0.38/s, done in 8 s"]


def test_a_log_gets_plain_lines_and_a_terminal_a_bar() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(progress_bar(desc="d", unit="u", stream=io.StringIO()), PlainLines)
    bar = progress_bar(desc="d", unit="u", stream=Terminal())
    assert not isinstance(bar, PlainLines)
    bar.close()
