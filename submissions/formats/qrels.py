"""Derived PR qrels, ``[qID] [PRrunname]:[PassageRank] [grade]``, the grade counting R
nuggets citing the PassageKey (docs/formats.md, "Derived PR qrels and res files")."""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from .common import (
    BLANK_LINE,
    EMPTY_FIELD,
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    FIELD_QID,
    MAX_INTEGER_DIGITS,
    UNKNOWN_QID,
    BinaryReader,
    ParseResult,
    PassageKey,
    Problem,
    TextSink,
    check_writable,
    excerpt,
    is_blank,
    iter_text_lines,
    parse_int,
)
from .pr_run import DEFAULT_MAX_RANK
from .run_names import is_pr_run_name

QRELS_LINE_FORMAT = "[qID] [PRrunname]:[PassageRank] [grade]"
MAX_GRADE = 10**MAX_INTEGER_DIGITS - 1

QRELS_FIELD_COUNT = "found {} space-separated field(s); expected 3: " + QRELS_LINE_FORMAT
BAD_PASSAGE_KEY = "found PassageKey {!r}; expected [PRrunname]:[PassageRank] such as WASEDA-PO-1:3"
BAD_GRADE = "found grade {!r}; expected an integer of 0 or more"
DUPLICATE_QREL = (
    "found qID {!r} and PassageKey {} again (first on line {}); expected each pair once"
)

FIELD_PASSAGE_KEY = "PassageKey"
FIELD_GRADE = "grade"


@dataclass(frozen=True, slots=True)
class QrelsRecord:
    """How relevant the passage at `passage_key` is to question `qid`."""

    qid: str
    passage_key: PassageKey
    grade: int


def parse_pr_qrels(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
) -> ParseResult[QrelsRecord]:
    """Parse a derived PR qrels file (fields separated by one space, as written), reporting
    every problem."""
    problems: list[Problem] = []
    records: list[QrelsRecord] = []
    first_lines: dict[tuple[str, PassageKey], int] = {}
    lineno = 0
    for lineno, line in iter_text_lines(binary_file, problems):
        if line is None:
            continue
        if is_blank(line):
            problems.append(Problem(lineno, FIELD_LINE, BLANK_LINE.format(QRELS_LINE_FORMAT)))
            continue
        fields = line.split(" ")
        if len(fields) != 3:
            problems.append(Problem(lineno, FIELD_LINE, QRELS_FIELD_COUNT.format(len(fields))))
            continue
        before = len(problems)
        qid, key_text, grade_text = fields
        if is_blank(qid):
            problems.append(Problem(lineno, FIELD_QID, EMPTY_FIELD.format(FIELD_QID)))
        elif known_qids is not None and qid not in known_qids:
            problems.append(Problem(lineno, FIELD_QID, UNKNOWN_QID.format(qid)))
        key = _passage_key(key_text, max_rank)
        if key is None:
            problems.append(
                Problem(lineno, FIELD_PASSAGE_KEY, BAD_PASSAGE_KEY.format(excerpt(key_text)))
            )
        grade = parse_int(grade_text, 0, MAX_GRADE)
        if grade is None:
            problems.append(Problem(lineno, FIELD_GRADE, BAD_GRADE.format(excerpt(grade_text))))
        if key is None or grade is None:
            continue
        first_line = first_lines.setdefault((qid, key), lineno)
        if first_line != lineno:
            problems.append(
                Problem(lineno, FIELD_PASSAGE_KEY, DUPLICATE_QREL.format(qid, key, first_line))
            )
        if len(problems) == before:
            records.append(QrelsRecord(qid, key, grade))
    if lineno == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format("qrels line")))
    return ParseResult(records, problems)


def write_pr_qrels(records: Iterable[QrelsRecord], text_file: TextSink) -> None:
    """Write `records` as PR qrels lines; ValueError for a space or line break in a qID or
    run name."""
    for record in records:
        check_writable(record.qid, FIELD_QID, separator=" ")
        check_writable(record.passage_key.run_name, FIELD_PASSAGE_KEY, separator=" ")
        text_file.write(f"{record.qid} {record.passage_key} {record.grade}\n")


def _passage_key(text: str, max_rank: int) -> PassageKey | None:
    run_name, separator, rank_text = text.rpartition(":")
    rank = parse_int(rank_text, 1, max_rank)
    if not separator or rank is None or not is_pr_run_name(run_name):
        return None
    return PassageKey(run_name, rank)
