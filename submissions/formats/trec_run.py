"""TREC runs, trec_eval's format: ``qid Q0 docid rank score tag``, one line per passage.

The ``ranking`` tracks of a RUBRIC campaign (docs/formats.md): white-space-separated;
the tag holds one value throughout the file; the order is by score, descending, as
trec_eval takes it. A docid that is not in the corpus, a duplicate docid within a query,
a non-numeric score or a qid that is not a query is an error naming its line.

How trec_eval reads a run (usnistgov/trec_eval, ``get_trec_results.c``, read at f4253652):
it skips blank lines and lines whose first non-blank character is ``#``, splits a line on
white space, takes the score with ``atof``, ignores the second column ("iter", written
``Q0``) and the rank, and keeps the run tag of the last line only. ``form_res_rels.c``
then sorts each query's documents with ``comp_sim_docno``: by score, descending, ties
broken by ``strcmp(docno2, docno1)``, i.e. by docno *descending*; and it stops with
"duplicate docs" on a docno given twice for one query. So here:

- The Q0 column is accepted whatever it holds (``Q0``, ``0``, ``iter1``): trec_eval
  ignores it, and tools differ in what they write there, so refusing one spelling would
  refuse runs that trec_eval scores.
- The rank must be a plain integer 0 or more (the format says one is there; trec_eval's own
  example starts at 0) but does not order anything: the score does, as in trec_eval.
- The tag must be the same on every line, where trec_eval silently keeps the
  last one.
- Blank and ``#`` lines are skipped, as trec_eval skips them; a line with other than six
  fields is an error (trec_eval ignores what follows the tag; the format has six).
- Fields are separated by spaces and tabs; other control characters are refused,
  NUL included, which trec_eval cannot read either.

`parse_trec_run` returns each query's records in exactly trec_eval's order. Run names of
ranking and response tracks are ``[Team]-[label]`` (`parse_rubric_run_name`).

Pure: no Django imports.
"""

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
    """One line of a TREC run: `docid` retrieved for query `qid` with `score`.

    `rank` is kept as written; trec_eval (and this service) order by `score`.
    """

    qid: str
    docid: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class TrecRun:
    """A TREC run as read: its tag, its rankings and every problem found in it.

    `rankings` maps each qid (in the order queries first appear in the file) to its
    records in trec_eval's order (`trec_eval_order`). When `problems` is not empty the
    upload must be rejected whole; `rankings` then hold only the lines without problems.
    """

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
    """`records` (of one query) as trec_eval ranks them.

    By score, descending; ties by docid, descending (``comp_sim_docno`` in trec_eval's
    ``form_res_rels.c`` returns ``strcmp(p2->docno, p1->docno)``). `strcmp` compares
    bytes, and UTF-8 keeps the order of code points, so comparing the str is the same.
    """
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
    """Parse a TREC run from a binary file, reporting every problem.

    `known_qids`: the campaign's queries (None: any qid). `missing_docids`: asked, in
    batches of `DOCID_BATCH_SIZE` distinct docids, which are not in the corpus, so that a
    database can answer one query per batch (None: any docid; `missing_from` wraps a
    set). The file is read in chunks; the records are the only copy of it in memory, as
    they must be to sort them. Problems come in line order.
    """
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
    """Write `records` as a TREC run with run tag `tag`, one line each, in the order given.

    The score is written as `repr` writes a float (the shortest text that reads back as the
    same float). Raises ValueError for a qid, docid or tag that is empty or holds white
    space, a qid that starts with ``#`` (a comment line to trec_eval) or a score that is
    not finite.
    """
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
    """A run name of a ranking or response track: ``[Team]-[label]``.

    The label is ASCII letters, digits and ``_``, at most 32; the team is everything
    before the last ``-``.
    """

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
