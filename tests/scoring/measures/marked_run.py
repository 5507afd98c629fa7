"""A tiny reader of marked AC runs, just enough to build measure inputs from the toy
campaign in tests/data/toy (the real parser belongs to submissions/formats)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MarkedBlock:
    """One answer block of a marked AC run, split just enough for scoring."""

    qid: str
    confidence: int
    nuggets: tuple[tuple[str, str, int], ...]  # (mark, PRrunname, PassageRank)


def read_marked_run(path: Path) -> list[MarkedBlock]:
    """A tiny reader of the marked AC format: `<Dxxx>`, `answer;confidence` (the
    confidence after the last `;`), then `mark;num;run;rank;nugget` lines."""
    blocks: list[MarkedBlock] = []
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if not line.startswith("<") or line.startswith("</"):
            continue
        qid = line.strip("<>")
        confidence = int(next(lines).rsplit(";", 1)[1])
        nuggets = []
        for nugget_line in lines:
            if nugget_line == f"</{qid}>":
                break
            mark, _num, run, rank, _text = nugget_line.split(";", 4)
            nuggets.append((mark, run, int(rank)))
        blocks.append(MarkedBlock(qid, confidence, tuple(nuggets)))
    return blocks
