"""PR qrels derived from marked AC runs (NTCIR-19 R2C2; docs/formats.md): a PassageKey's
grade is the number of R nuggets citing it over all AC runs. PassageKey and the marks are
the run formats' own, so the qrels and the files speak one vocabulary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import compress
from operator import attrgetter

from submissions.formats.common import PassageKey
from submissions.formats.marked_ac_run import MARKS, RELEVANT, MarkedNugget

from .ac import BAD_MARK

_MARK = attrgetter("mark")
_NUGGET = attrgetter("nugget")
_CITED_PASSAGE = attrgetter("qid", "passage_key.run_name", "passage_key.rank")


def derive_pr_qrels(marked_runs: Iterable[Iterable[MarkedNugget]]) -> dict[str, dict[str, int]]:
    """qid -> {"RUN:RANK": grade}, counting the R nuggets that cite each PassageKey over the
    marked runs given; grades >= 1 only, sorted, so the result is deterministic (R2C2 task)."""
    grades: Counter[tuple[str, str, int]] = Counter()
    for run in marked_runs:
        nuggets = list(run)
        marks = list(map(_MARK, nuggets))
        if not MARKS.keys() >= set(marks):
            raise ValueError(BAD_MARK.format(mark=next(m for m in marks if m not in MARKS)))
        # A campaign has hundreds of thousands of nugget lines: the relevant ones are
        # picked and their passages read without a Python frame per nugget.
        relevant = compress(nuggets, map(RELEVANT.__eq__, marks))
        grades.update(map(_CITED_PASSAGE, map(_NUGGET, relevant)))
    by_question: dict[str, list[tuple[str, int, int]]] = {}
    for (qid, run_name, rank), grade in grades.items():
        by_question.setdefault(qid, []).append((run_name, rank, grade))
    return {
        # f"{run}:{rank}" is str(PassageKey(run, rank)), the passage's document id,
        # without building a key per passage (the tests hold the two equal).
        qid: {f"{run_name}:{rank}": grade for run_name, rank, grade in sorted(by_question[qid])}
        for qid in sorted(by_question)
    }


def pr_qrels_lines(qrels: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The derived PR qrels file, `[qID] [PRrunname]:[PassageRank] [grade]` a line, sorted by
    question, run, then rank as a number (RUN:2 before RUN:10); grades below 1 left out."""
    rows = sorted(
        (qid, PassageKey.parse(docid), grade)
        for qid, judged in qrels.items()
        for docid, grade in judged.items()
        if grade >= 1
    )
    return [f"{qid} {passage} {grade}" for qid, passage, grade in rows]
