"""PR runs: one passage per line, ``[qID];[PassageRank];[docID];[PassageText]``
(docs/formats.md, "PR run"). A fast path over bytes accepts valid lines; `_diagnose`
names the problems of the others, and both must agree (tests check)."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass

from .common import (
    BAD_INTEGER,
    BLANK_LINE,
    CARRIAGE_RETURN,
    EMPTY_FIELD,
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    FIELD_PASSAGE_RANK,
    FIELD_QID,
    UNKNOWN_QID,
    BinaryReader,
    ParseResult,
    Problem,
    TextSink,
    check_writable,
    decode_line,
    excerpt,
    is_blank,
    is_utf8,
    iter_line_blocks,
    parse_int,
    strip_cr,
)
from .control_characters import (
    has_control_bytes,
    may_hold_control_bytes,
    separated_line_control_problem,
)
from .limits import MAX_PASSAGE_CHARS, TOO_LONG

PR_LINE_FORMAT = "[qID];[PassageRank];[docID];[PassageText]"
DEFAULT_MAX_RANK = 20

FIELD_COUNT = "found {} ';'-separated field(s); expected 4: " + PR_LINE_FORMAT
DUPLICATE_RANK = (
    "found PassageRank {} for qID {!r} again (first on line {}); "
    "expected each rank at most once per question (no ties)"
)
TOO_MANY_PASSAGES = "found passage {} for qID {!r}; expected at most {} passages per question"

FIELD_DOC_ID = "docID"
FIELD_TEXT = "PassageText"
PR_FIELDS = (FIELD_QID, FIELD_PASSAGE_RANK, FIELD_DOC_ID, FIELD_TEXT)

#: The width of the docID column (submissions.models.PassageRecord.doc_id): a longer one
#: would pass SQLite and make PostgreSQL refuse the whole upload with an error.
MAX_DOC_ID_CHARS = 200

# [Team]-{PG|PO}-[n]. A team name may hold "-" but no white space, ";" or ":" (a
# PassageKey is written RUN:RANK in qrels and res files).


@dataclass(frozen=True, slots=True)
class PassageRecord:
    """One line of a PR run: the passage at `rank` for question `qid`."""

    qid: str
    rank: int
    doc_id: str
    text: str


def iter_pr_run(
    binary_file: BinaryReader,
    problems: list[Problem],
    *,
    known_qids: Container[str] | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
    max_passage_chars: int = MAX_PASSAGE_CHARS,
) -> Iterator[PassageRecord]:
    """Yield a PR run's valid passages as it is read, appending every problem to `problems`
    (complete only once the iterator is exhausted)."""
    return _scan(binary_file, problems, known_qids, max_rank, max_passage_chars, keep=True)


def parse_pr_run(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
    max_passage_chars: int = MAX_PASSAGE_CHARS,
) -> ParseResult[PassageRecord]:
    """Parse a PR run from a binary file, reporting every problem."""
    problems: list[Problem] = []
    records = list(_scan(binary_file, problems, known_qids, max_rank, max_passage_chars, keep=True))
    return ParseResult(records, problems)


def validate_pr_run(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
    max_passage_chars: int = MAX_PASSAGE_CHARS,
) -> list[Problem]:
    """Every problem of a PR run, keeping no records, so memory stays flat however large the
    file: the upload validator."""
    problems: list[Problem] = []
    for _ in _scan(binary_file, problems, known_qids, max_rank, max_passage_chars, keep=False):
        pass
    return problems


def write_pr_run(records: Iterable[PassageRecord], text_file: TextSink) -> None:
    """Write `records` as a PR run, one line each; ValueError for a line break, or a ``;`` in
    a qID or docID."""
    for record in records:
        check_writable(record.qid, FIELD_QID, separator=";")
        check_writable(record.doc_id, FIELD_DOC_ID, separator=";")
        check_writable(record.text, FIELD_TEXT)
        text_file.write(f"{record.qid};{record.rank};{record.doc_id};{record.text}\n")


def returned_ranks(records: Iterable[PassageRecord]) -> dict[str, frozenset[int]]:
    """qID -> the PassageRanks a PR run returned for it: one run's entry of the shared PR
    runs that `ac_run.parse_ac_run` checks PassageKeys against."""
    ranks: dict[str, set[int]] = {}
    for record in records:
        ranks.setdefault(record.qid, set()).add(record.rank)
    return {qid: frozenset(qid_ranks) for qid, qid_ranks in ranks.items()}


def _scan(
    binary_file: BinaryReader,
    problems: list[Problem],
    known_qids: Container[str] | None,
    max_rank: int,
    max_passage_chars: int,
    *,
    keep: bool,
) -> Iterator[PassageRecord]:
    tally = _Tally(problems, known_qids, max_rank, max_passage_chars)
    rank_lines = tally.rank_lines
    extra_lines = tally.extra_lines
    # One dict lookup instead of isdigit(), len(), int() and a range check; other
    # spellings of a valid rank ("07") take the slow path, which accepts them.
    rank_values = {str(rank).encode(): rank for rank in range(1, max_rank + 1)}
    max_doc_id = MAX_DOC_ID_CHARS  # a local: read once per line
    lineno = 0
    doc_id = text = ""
    for data, end, lines in iter_line_blocks(binary_file):
        # Checked once per block in C: most blocks have no \r at all, and are ASCII or
        # valid UTF-8 as a whole, so their lines need neither check on their own.
        has_cr = data.find(b"\r", 0, end) >= 0
        utf8_checked = not keep and (data.isascii() or is_utf8(data, end))
        # Most blocks hold no control character; the lines of one that may are checked
        # one by one, and those that do left to the slow path.
        controls = may_hold_control_bytes(data)
        for raw in lines:
            lineno += 1
            if has_cr:
                line = strip_cr(raw)
                # Any other \r: leave the line to the slow path.
                parts = [line] if b"\r" in line else line.split(b";", 3)
            else:
                parts = raw.split(b";", 3)
            if len(parts) == 4:
                q, r, d, t = parts
                rank = rank_values.get(r)
                if (
                    rank is not None
                    and q
                    and d
                    and t
                    and len(t) <= max_passage_chars
                    and len(d) <= max_doc_id
                    and not (t.isspace() or q.isspace() or d.isspace())
                    and not (controls and has_control_bytes(raw))
                ):
                    try:
                        qid = q.decode("utf-8")
                        if keep:
                            doc_id = d.decode("utf-8")
                            text = t.decode("utf-8")
                        elif not utf8_checked:
                            d.decode("utf-8")
                            t.decode("utf-8")
                    except UnicodeDecodeError:
                        pass
                    else:
                        ok = True
                        if known_qids is not None and qid not in known_qids:
                            problems.append(Problem(lineno, FIELD_QID, UNKNOWN_QID.format(qid)))
                            ok = False
                        ranks = rank_lines.get(qid)
                        if ranks is None:
                            ranks = rank_lines[qid] = {}
                        first_line = ranks.setdefault(rank, lineno)
                        if (first_line != lineno or qid in extra_lines) and tally.tie_or_excess(
                            lineno, qid, rank, first_line
                        ):
                            ok = False
                        if ok and keep:
                            yield PassageRecord(qid, rank, doc_id, text)
                        continue
            record = tally.slow_line(raw, lineno)
            if record is not None and keep:
                yield record
    if lineno == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format("passage line")))


class _Tally:
    """What the checks across lines remember: the ranks and line counts per question."""

    __slots__ = (
        "extra_lines",
        "known_qids",
        "max_passage_chars",
        "max_rank",
        "problems",
        "rank_lines",
    )

    def __init__(
        self,
        problems: list[Problem],
        known_qids: Container[str] | None,
        max_rank: int,
        max_passage_chars: int,
    ) -> None:
        self.problems = problems
        self.known_qids = known_qids
        self.max_rank = max_rank
        self.max_passage_chars = max_passage_chars
        self.rank_lines: dict[str, dict[int, int]] = {}  # qID -> rank -> first line
        # qID -> its lines not counted in rank_lines (a tie or an invalid rank); only these
        # can push a question past max_rank passages.
        self.extra_lines: dict[str, int] = {}

    def tie_or_excess(self, lineno: int, qid: str, rank: int | None, first_line: int) -> bool:
        """Report a tied rank and a question with too many passages; True if either."""
        found = False
        if first_line != lineno:
            self.problems.append(
                Problem(lineno, FIELD_PASSAGE_RANK, DUPLICATE_RANK.format(rank, qid, first_line))
            )
            self.extra_lines[qid] = self.extra_lines.get(qid, 0) + 1
            found = True
        count = len(self.rank_lines[qid]) + self.extra_lines.get(qid, 0)
        if count > self.max_rank:
            self.problems.append(
                Problem(lineno, FIELD_LINE, TOO_MANY_PASSAGES.format(count, qid, self.max_rank))
            )
            found = True
        return found

    def slow_line(self, raw: bytes, lineno: int) -> PassageRecord | None:
        """All checks of one line that the fast path did not accept; its record if clean."""
        before = len(self.problems)
        qid, rank, record = _diagnose(
            raw, lineno, self.max_rank, self.problems, max_passage_chars=self.max_passage_chars
        )
        if qid is not None:
            if self.known_qids is not None and qid not in self.known_qids:
                self.problems.append(Problem(lineno, FIELD_QID, UNKNOWN_QID.format(qid)))
            ranks = self.rank_lines.setdefault(qid, {})
            if rank is None:
                self.extra_lines[qid] = self.extra_lines.get(qid, 0) + 1
                first_line = lineno
            else:
                first_line = ranks.setdefault(rank, lineno)
            self.tie_or_excess(lineno, qid, rank, first_line)
        return record if len(self.problems) == before else None


def _diagnose(
    raw: bytes,
    lineno: int,
    max_rank: int,
    problems: list[Problem],
    *,
    max_passage_chars: int = MAX_PASSAGE_CHARS,
) -> tuple[str | None, int | None, PassageRecord | None]:
    """Every problem of one line, on the slow path: the qID and rank when usable for the
    checks across lines, and the record if the line has no problem after all."""
    before = len(problems)
    line = strip_cr(raw)
    if not line or line.isspace():
        problems.append(Problem(lineno, FIELD_LINE, BLANK_LINE.format(PR_LINE_FORMAT)))
        return None, None, None
    decoded = decode_line(line, lineno)
    if isinstance(decoded, Problem):
        problems.append(decoded)
        # Go on with the rest of the line: its other problems are worth reporting too.
        text = line.decode("utf-8", "replace")
        qid_is_utf8 = not isinstance(decode_line(line.split(b";", 1)[0], lineno), Problem)
    else:
        text = decoded
        qid_is_utf8 = True
    if "\r" in text:
        problems.append(Problem(lineno, FIELD_LINE, CARRIAGE_RETURN))
    control = separated_line_control_problem(text, lineno, PR_FIELDS, carriage_return=True)
    if control is not None:
        problems.append(control)
    fields = text.split(";", 3)
    if len(fields) != 4:
        problems.append(Problem(lineno, FIELD_LINE, FIELD_COUNT.format(len(fields))))
        return None, None, None

    qid_text, rank_text, doc_id, passage = fields
    qid: str | None = qid_text
    if is_blank(qid_text):
        problems.append(Problem(lineno, FIELD_QID, EMPTY_FIELD.format(FIELD_QID)))
        qid = None
    rank = parse_int(rank_text, 1, max_rank)
    if rank is None:
        problems.append(
            Problem(
                lineno,
                FIELD_PASSAGE_RANK,
                BAD_INTEGER.format(FIELD_PASSAGE_RANK, excerpt(rank_text), 1, max_rank),
            )
        )
    if is_blank(doc_id):
        problems.append(Problem(lineno, FIELD_DOC_ID, EMPTY_FIELD.format(FIELD_DOC_ID)))
    elif len(doc_id) > MAX_DOC_ID_CHARS:
        problems.append(
            Problem(
                lineno, FIELD_DOC_ID, TOO_LONG.format(len(doc_id), FIELD_DOC_ID, MAX_DOC_ID_CHARS)
            )
        )
    if is_blank(passage):
        problems.append(Problem(lineno, FIELD_TEXT, EMPTY_FIELD.format(FIELD_TEXT)))
    elif len(passage) > max_passage_chars:
        problems.append(
            Problem(
                lineno, FIELD_TEXT, TOO_LONG.format(len(passage), FIELD_TEXT, max_passage_chars)
            )
        )
    if not qid_is_utf8:
        qid = None
    if qid is not None and rank is not None and len(problems) == before:
        return qid, rank, PassageRecord(qid, rank, doc_id, passage)
    return qid, rank, None
