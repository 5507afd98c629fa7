"""Helpers for the format tests: the toy example files and readers that read oddly."""

from __future__ import annotations

import io
import re
from pathlib import Path

#: The toy campaign (tests/data/toy); its README has the hand-computed expectations.
EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "toy"
QIDS = frozenset({"D001", "D002", "D003"})


def example_bytes(name: str) -> bytes:
    return (EXAMPLES / name).read_bytes()


def unwritable(what: str, value: str, *, separator: str | None = None) -> str:
    """A `pytest.raises(match=...)` pattern for exactly the message `check_writable` raises.

    `common.check_writable` builds its messages inline, so the wording is spelled out here.
    """
    if separator is None:
        message = f"{what} {value!r} contains a line break"
    else:
        message = f"{what} {value!r} contains the separator {separator!r}"
    return f"^{re.escape(message)}$"


def bio(content: str | bytes) -> io.BytesIO:
    """A binary file holding `content` (str is encoded as UTF-8)."""
    return io.BytesIO(content.encode() if isinstance(content, str) else content)


class TrickleReader:
    """A binary file that returns at most `step` bytes per read, as a socket may.

    Counts the bytes handed out, so a test can see how much was read so far.
    """

    def __init__(self, data: bytes, step: int) -> None:
        self.data = data
        self.step = step
        self.position = 0

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = len(self.data)
        end = self.position + min(size, self.step)
        chunk = self.data[self.position : end]
        self.position += len(chunk)
        return chunk


#: The ranks the toy PR runs return per question (as `pr_run.returned_ranks` finds them).
SHARED_PR_RUNS = {
    "WASEDA-PO-1": {
        "D001": frozenset({1, 2, 3}),
        "D002": frozenset({1, 2}),
        "D003": frozenset({1, 2}),
    },
    "KYOTO-PG-1": {"D001": frozenset({1, 2}), "D002": frozenset({1}), "D003": frozenset({1})},
}
