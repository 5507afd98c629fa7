"""What the terminal gets: exit statuses, messages on stderr, times to the minute in UTC,
numbers to four places and aligned tables."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

EXIT_OK = 0
EXIT_ERROR = 1  # the server or the check refused, or the site could not be reached
EXIT_USAGE = 2  # argparse's own
EXIT_STILL_PENDING = 3  # status --wait ran out of time
EXIT_INTERRUPTED = 130


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def when(text: str | None) -> str:
    """A time of the API (ISO 8601) in UTC, to the minute."""
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, indent: int) -> None:
    widths = [max(len(str(cell)) for cell in column)
              for column in zip(header, *rows, strict=True)]
    for cells in (header, *rows):
        line = "  ".join(str(cell).ljust(width) for cell, width in zip(cells, widths,
                                                                       strict=True))
        print(" " * indent + line.rstrip())
