"""Manual qrels, trec_eval's format: ``qid iter docid rel``, one judgment per line.

What organisers upload to meta-evaluate a RUBRIC track (docs/rubric.md): the
manual relevance judgments whose labels are set against the Rubric-Qrels. `qrels.py`
reads the R2C2 derived PR qrels, whose second field is a PassageKey; these have four.

How trec_eval reads qrels (usnistgov/trec_eval, ``get_qrels.c``): four white-space
separated fields, "string fields can contain no whitespace"; the second (``iter``,
written ``0`` or ``Q0``) is ignored; lines starting with ``#`` are comments; ``rel`` is
"an integer between -127 and 127" (negative levels such as the Web track's -2 for junk
are judged non-relevant); "File may contain no NULL characters". So here:

- Blank lines and ``#`` comment lines are skipped, as TREC runs' are (`trec_run`);
  a line of other than four fields is an error naming its line.
- The level is a plain integer from -127 to 127, with an optional minus sign.
- A (qid, docid) pair judged twice is an error naming both lines: trec_eval keeps
  both, and which one counts would depend on its sort.
- Control characters (NUL included) and bytes that are not UTF-8 are refused with
  their line.

Pure: no Django imports.
"""

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
    """Manual judgments as read: qid -> docid -> relevance level, and every problem.

    When `problems` is not empty the upload must be rejected whole; `levels` then hold
    only the lines without problems.
    """

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
    """Parse trec_eval qrels from a binary file, reporting every problem in line order.

    `known_qids`: the campaign's queries (None: any qid).
    """
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
