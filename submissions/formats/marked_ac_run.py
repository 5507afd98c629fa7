"""Marked AC runs: an AC run with each nugget line prefixed by the judge's mark, B, R or N
(docs/formats.md, "Marked AC run"). The marks are defined here only, for scoring and grading."""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .ac_run import (
    AnswerRecord,
    NuggetRecord,
    SharedPrRuns,
    format_nugget_line,
    read_nugget_line,
    write_answer_block,
)
from .answer_blocks import (
    FIELD_NUGGET,
    FIELD_NUGGET_NUM,
    FIELD_RUN_NAME,
    clean_records,
    read_answer_blocks,
)
from .common import FIELD_PASSAGE_RANK, BinaryReader, ParseResult, Problem, TextSink, excerpt
from .limits import MAX_ANSWER_CHARS
from .pr_run import DEFAULT_MAX_RANK

Mark: TypeAlias = Literal["B", "R", "N"]
BOGUS: Mark = "B"
RELEVANT: Mark = "R"
NONRELEVANT: Mark = "N"
MARKS: dict[str, Mark] = {BOGUS: BOGUS, RELEVANT: RELEVANT, NONRELEVANT: NONRELEVANT}

MARKED_NUGGET_LINE_FORMAT = "[Mark];[NuggetNum];[PRrunname];[PassageRank];[Nugget]"
BAD_MARK = (
    "found {!r} where the mark should be; expected "
    + MARKED_NUGGET_LINE_FORMAT
    + " with Mark B (bogus), R (relevant) or N (nonrelevant)"
)

FIELD_MARK = "Mark"
MARKED_NUGGET_FIELDS = (
    FIELD_MARK,
    FIELD_NUGGET_NUM,
    FIELD_RUN_NAME,
    FIELD_PASSAGE_RANK,
    FIELD_NUGGET,
)


@dataclass(frozen=True, slots=True)
class MarkedNugget:
    """A nugget and the judge's mark for it: B (bogus), R (relevant), N (nonrelevant)."""

    nugget: NuggetRecord
    mark: Mark


@dataclass(frozen=True, slots=True)
class MarkedAnswerRecord:
    """One block of a marked AC run: an `AnswerRecord` with a mark on every nugget."""

    qid: str
    answer: str
    confidence: int
    nuggets: tuple[MarkedNugget, ...]

    @classmethod
    def from_answer(cls, answer: AnswerRecord, marks: Mapping[int, Mark]) -> MarkedAnswerRecord:
        """Mark each nugget of `answer` with ``marks[nugget_num]`` (KeyError if missing)."""
        nuggets = tuple(MarkedNugget(n, marks[n.nugget_num]) for n in answer.nuggets)
        return cls(answer.qid, answer.answer, answer.confidence, nuggets)

    def unmarked(self) -> AnswerRecord:
        """The block as the participant submitted it."""
        nuggets = tuple(marked.nugget for marked in self.nuggets)
        return AnswerRecord(self.qid, self.answer, self.confidence, nuggets)


def parse_marked_ac_run(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    shared_pr_runs: SharedPrRuns | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
    max_answer_chars: int = MAX_ANSWER_CHARS,
) -> ParseResult[MarkedAnswerRecord]:
    """Parse a marked AC run: the rules and arguments of `ac_run.parse_ac_run`, plus a valid
    mark on every nugget line."""
    problems: list[Problem] = []

    def nugget_line(lineno: int, qid: str, line: str) -> tuple[int | None, MarkedNugget | None]:
        mark_text, separator, rest = line.partition(";")
        mark = MARKS.get(mark_text) if separator else None
        if mark is None:
            problems.append(
                Problem(
                    lineno, FIELD_MARK, BAD_MARK.format(excerpt(mark_text if separator else line))
                )
            )
            return None, None
        nugget_num, nugget = read_nugget_line(
            lineno,
            qid,
            rest,
            problems,
            shared_pr_runs=shared_pr_runs,
            max_rank=max_rank,
            max_nugget_chars=max_answer_chars,
        )
        return nugget_num, None if nugget is None else MarkedNugget(nugget, mark)

    blocks = read_answer_blocks(
        binary_file,
        problems,
        nugget_line,
        known_qids=known_qids,
        max_answer_chars=max_answer_chars,
        nugget_fields=MARKED_NUGGET_FIELDS,
    )
    return ParseResult(clean_records(blocks, MarkedAnswerRecord), problems)


def write_marked_ac_run(records: Iterable[MarkedAnswerRecord], text_file: TextSink) -> None:
    """Write `records` as a marked AC run; ValueError for a value that would break the file,
    or a mark other than B, R or N."""
    for record in records:
        write_answer_block(
            record.qid,
            record.answer,
            record.confidence,
            (_format_marked_line(marked) for marked in record.nuggets),
            text_file,
        )


def _format_marked_line(marked: MarkedNugget) -> str:
    if marked.mark not in MARKS:
        raise ValueError(f"{FIELD_MARK} {marked.mark!r} is not B, R or N")
    return f"{marked.mark};{format_nugget_line(marked.nugget)}"


@dataclass(frozen=True)
class BlockMarks:
    """One answer block's marks in NuggetNum order, its verdict, and whether every
    judgment behind it has a label (an incomplete block counts as unanswered)."""

    marks: tuple[Mark, ...]
    correct: bool | None
    complete: bool


def block_marks(*, nugget_nums: Iterable[int], entailed: Mapping[int, bool | None],
                verdict: Mapping[str, Any] | None) -> BlockMarks:
    """One answer block's marks: B not entailed, R entailed and relevant to a correct answer,
    N otherwise; one rule for the site and the archive's replay. `entailed`: NuggetNum ->
    entailment label (None: none yet); `verdict`: the answer judgment's label or None."""
    correct = None if verdict is None else bool(verdict["correct"])
    relevant = set(verdict.get("relevant", [])) if verdict is not None and correct else set()
    complete = verdict is not None
    marks: list[Mark] = []
    for number in nugget_nums:
        state = entailed.get(number)
        if state is False:
            marks.append(BOGUS)
        elif state is True:
            marks.append(RELEVANT if number in relevant else NONRELEVANT)
        else:
            complete = False
            marks.append(NONRELEVANT)  # a placeholder: the block is incomplete
    return BlockMarks(marks=tuple(marks), correct=correct, complete=complete)
