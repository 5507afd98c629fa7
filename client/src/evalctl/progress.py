"""An upload's progress bar, drawn on stderr with the standard library alone."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import IO, TextIO

BAR_WIDTH = 30


def human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


class ProgressBar:
    """``label [#####-----]  50% 1.2 MB/2.4 MB``, redrawn in place on each new percent
    (a log gets at most a hundred redraws, a terminal a moving bar), then a line break."""

    def __init__(self, label: str, total: int, stream: TextIO) -> None:
        self.label = label
        self.total = total
        self.stream = stream
        self._shown: int | None = None

    def __call__(self, done: int) -> None:
        percent = 100 if self.total == 0 else min(100, done * 100 // self.total)
        if percent == self._shown:
            return
        self._shown = percent
        filled = BAR_WIDTH * percent // 100
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {percent:3d}% "
                          f"{human_size(min(done, self.total))}/{human_size(self.total)}")
        self.stream.flush()

    def finish(self) -> None:
        if self._shown is not None:
            self.stream.write("\n")
            self.stream.flush()


class CountingReader:
    """A binary file whose reads are counted and told to `progress`; it has what httpx2 needs
    to send it as a part of known length, and a seek to the start (a resend) restarts the count."""

    def __init__(self, file: IO[bytes], progress: Callable[[int], None]) -> None:
        self._file = file
        self._progress = progress
        self._done = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._file.read(size)
        self._done += len(chunk)
        self._progress(self._done)
        return chunk

    def fileno(self) -> int:
        return self._file.fileno()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        position = self._file.seek(offset, whence)
        self._done = position
        return position

    def tell(self) -> int:
        return self._file.tell()
