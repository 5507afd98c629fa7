"""Manual qrels in trec_eval's format, ``qid iter docid rel``, that organisers upload to
meta-evaluate a RUBRIC track (docs/formats.md, "Manual reference for meta-evaluation")."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field

from .common import (
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    BinaryReader,
    Problem,
    excerpt,
    parse_int,
)
from .trec_lines import iter_trec_fields

TREC_QRELS_LINE_FORMAT = "qid 0 docid rel"
MIN_TREC_LEVEL = -127
MAX_TREC_LEVEL = 127

TREC_QRELS_FIELD_COUNT = (
    "found {} white-space-separated field(s); expected 4: " + TREC_QRELS_LINE_FORMAT
)
BAD_LEVEL = (
    f"found rel {{!r}}; expected an integer from {MIN_TREC_LEVEL} to {MAX_TREC_LEVEL}"
)
UNKNOWN_QUERY = (
    "found qid {!r}, which is not a query of this campaign; expected one of its query ids"
)
DUPLICATE_JUDGMENT = (
    "found docid {!r} for qid {!r} again (first on line {}); expected each pair once"
)

FIELD_QID = "qid"
FIELD_DOCID = "docid"
FIELD_REL = "rel"


@dataclass(frozen=True, slots=True)
class TrecQrels:
    """Manual judgments as read, qid -> docid -> level, and every problem; with any problem the
    upload is refused whole."""

    levels: dict[str, dict[str, int]]
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def judgments(self) -> int:
        return sum(len(by_docid) for by_docid in self.levels.values())


def parse_trec_qrels(
    binary_file: BinaryReader, *, known_qids: Container[str] | None = None
) -> TrecQrels:
    """Parse trec_eval qrels, reporting every problem in line order; `known_qids` None takes
    any qid."""
    problems: list[Problem] = []
    levels: dict[str, dict[str, int]] = {}
    first_lines: dict[tuple[str, str], int] = {}
    lines_read = 0
    for lineno, fields in iter_trec_fields(binary_file, problems):
        lines_read += 1
        if fields is None:
            continue
        if len(fields) != 4:
            problems.append(
                Problem(lineno, FIELD_LINE, TREC_QRELS_FIELD_COUNT.format(len(fields)))
            )
            continue
        qid, _iter, docid, level_text = fields
        before = len(problems)
        if known_qids is not None and qid not in known_qids:
            problems.append(Problem(lineno, FIELD_QID, UNKNOWN_QUERY.format(excerpt(qid))))
        level = _level(level_text)
        if level is None:
            problems.append(Problem(lineno, FIELD_REL, BAD_LEVEL.format(excerpt(level_text))))
        first_line = first_lines.setdefault((qid, docid), lineno)
        if first_line != lineno:
            problems.append(Problem(lineno, FIELD_DOCID, DUPLICATE_JUDGMENT.format(
                excerpt(docid), excerpt(qid), first_line)))
        if level is not None and len(problems) == before:
            levels.setdefault(qid, {})[docid] = level
    if lines_read == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format("qrels line")))
    return TrecQrels(levels, problems)


def _level(text: str) -> int | None:
    negative = text.startswith("-")
    level = parse_int(text[1:] if negative else text, 0, -MIN_TREC_LEVEL)
    if level is None:
        return None
    level = -level if negative else level
    return level if MIN_TREC_LEVEL <= level <= MAX_TREC_LEVEL else None
