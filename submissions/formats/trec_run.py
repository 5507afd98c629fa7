"""TREC runs of a ranking track, ``qid Q0 docid rank score tag``, read and ordered exactly
as trec_eval reads and orders them (docs/formats.md, "TREC run"); run names ``[Team]-[label]``."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Container, Iterable, Sequence
from dataclasses import dataclass, field

from .common import (
    BAD_INTEGER,
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    MAX_INTEGER_DIGITS,
    BinaryReader,
    Problem,
    TextSink,
    check_writable,
    excerpt,
    parse_int,
)
from .run_names import TEAM_PART
from .trec_lines import iter_trec_fields

TREC_LINE_FORMAT = "qid Q0 docid rank score tag"
MAX_TREC_RANK = 10**MAX_INTEGER_DIGITS - 1
#: Distinct docids per call of `missing_docids`: one database query per batch.
DOCID_BATCH_SIZE = 5_000

TREC_FIELD_COUNT = "found {} white-space-separated field(s); expected 6: " + TREC_LINE_FORMAT
BAD_SCORE = "found score {!r}; expected a finite decimal number such as 14.8 or -2.5e-3"
TAG_CHANGED = "found tag {!r}; expected {!r}, the tag of line {} (one tag throughout the file)"
UNKNOWN_QUERY = (
    "found qid {!r}, which is not a query of this campaign; expected one of its query ids"
)
UNKNOWN_DOCID = (
    "found docid {!r}, which is not in the campaign's corpus; expected a docid of the corpus"
)
DUPLICATE_DOCID = (
    "found docid {!r} for qid {!r} again (first on line {}); "
    "expected each docid at most once per query"
)

FIELD_QID = "qid"
FIELD_DOCID = "docid"
FIELD_RANK = "rank"
FIELD_SCORE = "score"
FIELD_TAG = "tag"

# What atof reads as a plain decimal, without its leniencies: no "inf" or "nan" (NaN
# cannot be ordered), no hex floats, no trailing junk (atof("1.5x") is 1.5).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

#: Given docids (distinct, in file order), returns those that are not in the corpus.
MissingDocids = Callable[[Sequence[str]], Collection[str]]


@dataclass(frozen=True, slots=True)
class TrecRunRecord:
    """One line of a TREC run: `docid` retrieved for `qid` with `score`; `rank` is kept as
    written, but the score orders."""

    qid: str
    docid: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class TrecRun:
    """A TREC run as read: its tag, each qid's records in trec_eval's order, and every problem
    (with any, the upload is refused whole)."""

    tag: str | None
    rankings: dict[str, list[TrecRunRecord]]
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def docids(self) -> dict[str, list[str]]:
        """qid -> its docids, best first: the ranking that is graded and scored."""
        return {qid: [record.docid for record in records] for qid, records in self.rankings.items()}


def trec_eval_order(records: Iterable[TrecRunRecord]) -> list[TrecRunRecord]:
    """One query's records as trec_eval ranks them: score descending, ties by docid descending
    (``comp_sim_docno`` in trec_eval's ``form_res_rels.c``)."""
    return sorted(records, key=lambda record: (record.score, record.docid), reverse=True)


def missing_from(corpus: Container[str]) -> MissingDocids:
    """A `MissingDocids` for a corpus held in memory (a set of docids)."""

    def missing(docids: Sequence[str]) -> Collection[str]:
        return {docid for docid in docids if docid not in corpus}

    return missing


def parse_trec_run(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    missing_docids: MissingDocids | None = None,
) -> TrecRun:
    """Parse a TREC run, reporting every problem in line order; `missing_docids` is asked which
    docids are not in the corpus, `DOCID_BATCH_SIZE` distinct docids at a time."""
    problems: list[Problem] = []
    records: list[tuple[int, TrecRunRecord]] = []
    bad_lines: set[int] = set()
    first_lines: dict[tuple[str, str], int] = {}  # (qid, docid) -> first line
    tag: str | None = None
    tag_line = 0
    lines_read = 0
    for lineno, fields in iter_trec_fields(binary_file, problems):
        lines_read += 1
        if fields is None:
            continue
        if len(fields) != 6:
            problems.append(Problem(lineno, FIELD_LINE, TREC_FIELD_COUNT.format(len(fields))))
            continue
        qid, _q0, docid, rank_text, score_text, line_tag = fields
        before = len(problems)
        if known_qids is not None and qid not in known_qids:
            problems.append(Problem(lineno, FIELD_QID, UNKNOWN_QUERY.format(excerpt(qid))))
        rank = parse_int(rank_text, 0, MAX_TREC_RANK)
        if rank is None:
            problems.append(
                Problem(
                    lineno,
                    FIELD_RANK,
                    BAD_INTEGER.format(FIELD_RANK, excerpt(rank_text), 0, MAX_TREC_RANK),
                )
            )
        score = _score(score_text)
        if score is None:
            problems.append(Problem(lineno, FIELD_SCORE, BAD_SCORE.format(excerpt(score_text))))
        if tag is None:
            tag, tag_line = line_tag, lineno
        elif line_tag != tag:
            problems.append(
                Problem(lineno, FIELD_TAG, TAG_CHANGED.format(excerpt(line_tag), tag, tag_line))
            )
        first_line = first_lines.setdefault((qid, docid), lineno)
        if first_line != lineno:
            problems.append(
                Problem(
                    lineno,
                    FIELD_DOCID,
                    DUPLICATE_DOCID.format(excerpt(docid), excerpt(qid), first_line),
                )
            )
        if rank is not None and score is not None:
            records.append((lineno, TrecRunRecord(qid, docid, rank, score)))
        if len(problems) != before:
            bad_lines.add(lineno)
    if missing_docids is not None:
        bad_lines.update(_check_docids(first_lines, missing_docids, problems))
    if lines_read == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format("run line")))
    problems.sort(key=lambda problem: problem.line)
    by_qid: dict[str, list[TrecRunRecord]] = {}
    for lineno, record in records:
        if lineno not in bad_lines:
            by_qid.setdefault(record.qid, []).append(record)
    rankings = {qid: trec_eval_order(qid_records) for qid, qid_records in by_qid.items()}
    return TrecRun(tag, rankings, problems)


def write_trec_run(records: Iterable[TrecRunRecord], tag: str, text_file: TextSink) -> None:
    """Write `records` with tag `tag`, scores as `repr` writes them; ValueError for an empty or
    spaced qid, docid or tag, a qid starting with ``#``, or a score that is not finite."""
    _check_token(tag, FIELD_TAG)
    for record in records:
        _check_token(record.qid, FIELD_QID)
        if record.qid.startswith("#"):
            raise ValueError(f"{FIELD_QID} {record.qid!r} starts with '#', a comment to trec_eval")
        _check_token(record.docid, FIELD_DOCID)
        if not math.isfinite(record.score):
            raise ValueError(f"score {record.score!r} is not a finite number")
        text_file.write(f"{record.qid} Q0 {record.docid} {record.rank} {record.score!r} {tag}\n")


# --- run names -----------------------------------------------------------------------------

# The team part as in R2C2 run names (run_names.TEAM_PART): it may hold "-", but no
# white space, ";", ":" (docids of response segments are RUN:qid:i), slashes or control
# characters.
RUBRIC_RUN_NAME_RE = re.compile(TEAM_PART + r"-(?P<label>[A-Za-z0-9_]{1,32})")


@dataclass(frozen=True, slots=True)
class RubricRunName:
    """A run name of a ranking or response track, ``[Team]-[label]``: a label of ASCII letters,
    digits and ``_`` (at most 32) after the last ``-``."""

    team: str
    label: str

    def __str__(self) -> str:
        return f"{self.team}-{self.label}"


def parse_rubric_run_name(name: str) -> RubricRunName | None:
    """The parts of a well-formed ranking/response run name, or None."""
    match = RUBRIC_RUN_NAME_RE.fullmatch(name)
    if match is None:
        return None
    return RubricRunName(team=match["team"], label=match["label"])


def _score(text: str) -> float | None:
    if _DECIMAL.fullmatch(text) is None:
        return None
    score = float(text)
    return score if math.isfinite(score) else None  # 1e999 overflows to inf


def _check_docids(
    first_lines: dict[tuple[str, str], int],
    missing_docids: MissingDocids,
    problems: list[Problem],
) -> set[int]:
    """Report every line whose docid is not in the corpus; return those lines."""
    lines_of: dict[str, list[int]] = {}
    for (_qid, docid), lineno in first_lines.items():
        lines_of.setdefault(docid, []).append(lineno)
    # A duplicate line is left out of first_lines: it has its own problem already.
    docids = list(lines_of)
    bad: set[int] = set()
    for start in range(0, len(docids), DOCID_BATCH_SIZE):
        missing = set(missing_docids(docids[start : start + DOCID_BATCH_SIZE]))
        for docid in docids[start : start + DOCID_BATCH_SIZE]:
            if docid in missing:
                for lineno in lines_of[docid]:
                    problems.append(
                        Problem(lineno, FIELD_DOCID, UNKNOWN_DOCID.format(excerpt(docid)))
                    )
                    bad.add(lineno)
    return bad


def _check_token(value: str, what: str) -> None:
    check_writable(value, what, separator=" ")
    if not value or any(character.isspace() for character in value):
        raise ValueError(f"{what} {value!r} is empty or holds white space")
