"""PR qrels derived from marked AC runs (NTCIR-19 R2C2, DESIGN.md section 4).

A PassageKey (PRrunname, PassageRank) names one passage a PR run returned for a
question. Its grade is the number of relevant (R) nuggets that cite it over all AC runs
of the campaign; passages that no relevant nugget cites are not in the qrels
(nonrelevant, as trec_eval treats unjudged documents).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .ac import NUGGET_MARKS, NuggetMark

BAD_PASSAGE_KEY = "a PassageKey looks like RUN:RANK with RANK a positive integer, got {text!r}"
BAD_RANK = "a PassageRank must be a positive integer, got {rank!r}"
BAD_MARK = "a nugget mark must be one of B, R, N, got {mark!r}"


@dataclass(frozen=True, order=True)
class PassageKey:
    """(PRrunname, PassageRank); `str()` gives the qrels document id "RUN:RANK"."""

    run: str
    rank: int

    def __post_init__(self) -> None:
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1:
            raise ValueError(BAD_RANK.format(rank=self.rank))

    def __str__(self) -> str:
        return f"{self.run}:{self.rank}"

    @classmethod
    def parse(cls, text: str) -> PassageKey:
        """Parse "RUN:RANK" (the run name is everything before the last colon)."""
        run, sep, rank = text.rpartition(":")
        if not sep or not run or not rank.isdigit():
            raise ValueError(BAD_PASSAGE_KEY.format(text=text))
        return cls(run=run, rank=int(rank))


@dataclass(frozen=True)
class MarkedNugget:
    """One nugget line of a marked AC run: its question, mark and cited passage."""

    qid: str
    mark: str
    passage: PassageKey

    def __post_init__(self) -> None:
        if self.mark not in NUGGET_MARKS:
            raise ValueError(BAD_MARK.format(mark=self.mark))


def derive_pr_qrels(marked_runs: Iterable[Iterable[MarkedNugget]]) -> dict[str, dict[str, int]]:
    """qid -> {"RUN:RANK": grade} with grade = number of R nuggets citing that PassageKey.

    Counts over every marked AC run given; only grades >= 1 appear. Questions are
    sorted by id and passages by (run, rank), so the result (and any file written from
    it) is deterministic. Source: NTCIR-19 R2C2 task definition, DESIGN.md section 4.
    """
    grades: Counter[tuple[str, PassageKey]] = Counter()
    for run in marked_runs:
        for nugget in run:
            if nugget.mark == NuggetMark.RELEVANT:
                grades[(nugget.qid, nugget.passage)] += 1
    qrels: dict[str, dict[str, int]] = {}
    for qid, passage in sorted(grades):
        qrels.setdefault(qid, {})[str(passage)] = grades[(qid, passage)]
    return qrels


def pr_qrels_lines(qrels: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The derived PR qrels file, one `[qID] [PRrunname]:[PassageRank] [grade]` a line.

    Sorted by question id, then run name, then rank as a number (so RUN:2 precedes
    RUN:10). Grades below 1 are left out, as in the derived qrels themselves.
    """
    rows = sorted(
        (qid, PassageKey.parse(docid), grade)
        for qid, judged in qrels.items()
        for docid, grade in judged.items()
        if grade >= 1
    )
    return [f"{qid} {passage} {grade}" for qid, passage, grade in rows]
