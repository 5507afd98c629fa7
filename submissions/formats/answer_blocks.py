"""The block structure every AC-style file shares (`<qID>`, an answer line, up to ten
nugget lines, `</qID>`), read as a stream with each problem named by line and field
(docs/formats.md, "AC runs")."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeAlias, TypeVar

from .common import (
    BAD_INTEGER,
    BLANK_LINE,
    EMPTY_FIELD,
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    FIELD_PASSAGE_RANK,
    FIELD_QID,
    UNKNOWN_QID,
    BinaryReader,
    Problem,
    excerpt,
    is_blank,
    iter_text_lines,
    parse_int,
)
from .control_characters import separated_line_control_problem, visible
from .limits import MAX_ANSWER_CHARS, TOO_LONG

MAX_NUGGETS = 10
MIN_CONFIDENCE = 0
MAX_CONFIDENCE = 100
ANSWER_LINE_FORMAT = "[Answer];[Confidence]"
NUGGET_LINE_FORMAT = "[NuggetNum];[PRrunname];[PassageRank];[Nugget]"
OUTSIDE_BLOCK = "found {!r} outside any block; expected an opening tag such as <D001>"
DUPLICATE_BLOCK = (
    "found a second block for qID {!r} (the first opens on line {}); "
    "expected each qID at most once per file"
)
NESTED_BLOCK = (
    "found the opening tag <{}> inside the block <{}> opened on line {}; expected </{}> first"
)
MISMATCHED_CLOSING_TAG = (
    "found the closing tag </{}>; expected </{}> to close the block opened on line {}"
)
UNTERMINATED_BLOCK = (
    "found the end of the file inside the block <{}> opened here; expected </{}> first"
)
MISSING_ANSWER = (
    "found the block <{}> closed without an answer line; "
    "expected " + ANSWER_LINE_FORMAT + " as the first line of the block"
)
ANSWER_WITHOUT_SEPARATOR = "found {!r} without a ';'; expected " + ANSWER_LINE_FORMAT
TOO_MANY_NUGGETS = (
    "found nugget line {} in the block <{}>; expected at most {} nugget lines per block"
)
DUPLICATE_NUGGET_NUM = (
    "found NuggetNum {} again in the block <{}> (first on line {}); "
    "expected each NuggetNum at most once per block"
)
FIELD_TAG = "tag"
FIELD_ANSWER = "Answer"
FIELD_CONFIDENCE = "Confidence"
FIELD_NUGGET_NUM = "NuggetNum"
FIELD_RUN_NAME = "PRrunname"
FIELD_NUGGET = "Nugget"
ANSWER_FIELDS = (FIELD_ANSWER, FIELD_CONFIDENCE)
NUGGET_FIELDS = (FIELD_NUGGET_NUM, FIELD_RUN_NAME, FIELD_PASSAGE_RANK, FIELD_NUGGET)
N = TypeVar("N")
R = TypeVar("R")
#: Reads one nugget line of a block: (lineno, qID of the block, line) -> the NuggetNum
#: (when it is usable, for the uniqueness check) and the nugget (None if the line has any
#: problem, which the reader has reported).
NuggetLineReader: TypeAlias = Callable[[int, str, str], tuple[int | None, N | None]]


@dataclass(slots=True)
class AnswerBlock(Generic[N]):
    """One ``<qID>`` ... ``</qID>`` block as read; `clean` when it has no problem."""

    qid: str
    line: int  # of the opening tag
    answer: str = ""
    confidence: int = 0
    answer_read: bool = False
    nuggets: list[N] = field(default_factory=list)
    nugget_lines: int = 0
    nugget_num_lines: dict[int, int] = field(default_factory=dict)  # NuggetNum -> line
    clean: bool = True


def clean_records(blocks: Iterable[AnswerBlock[N]],
                  record: Callable[[str, str, int, tuple[N, ...]], R]) -> list[R]:
    """The blocks read without a problem, each made a `record` of its qID, answer, confidence
    and nuggets: what every AC-style reader returns."""
    return [record(b.qid, b.answer, b.confidence, tuple(b.nuggets)) for b in blocks if b.clean]


def read_answer_blocks(
    binary_file: BinaryReader,
    problems: list[Problem],
    nugget_line: NuggetLineReader[N],
    *,
    known_qids: Container[str] | None = None,
    max_answer_chars: int = MAX_ANSWER_CHARS,
    nugget_fields: tuple[str, ...] = NUGGET_FIELDS,
) -> Iterator[AnswerBlock[N]]:
    """Yield every block of an AC-style file, in file order and unclean ones too, checking
    its structure (tags, answer line, blank lines, nugget count and numbers, control
    characters); `nugget_line` reads each nugget line."""
    seen_qids: dict[str, int] = {}  # qID -> line of its first opening tag
    block: AnswerBlock[N] | None = None
    lineno = 0
    for lineno, line in iter_text_lines(binary_file, problems):
        if line is None:  # not UTF-8, already reported; it still takes its place
            if block is not None:
                block.clean = False
                if block.answer_read:
                    block.nugget_lines += 1
                else:
                    block.answer_read = True
            continue

        is_tag = line.startswith("<") and line.endswith(">")
        if is_tag:
            fields: tuple[str, ...] = (FIELD_QID,)
        elif block is None:
            fields = (FIELD_LINE,)
        else:
            fields = nugget_fields if block.answer_read else ANSWER_FIELDS
        control = separated_line_control_problem(
            line, lineno, fields, rest_first=fields is ANSWER_FIELDS
        )
        if control is not None:
            problems.append(control)

        if is_tag:
            closing = line.startswith("</")
            qid = line[2:-1] if closing else line[1:-1]
            if closing:
                if block is None:
                    problems.append(
                        Problem(lineno, FIELD_LINE, OUTSIDE_BLOCK.format(excerpt(line)))
                    )
                    continue
                if qid != block.qid:
                    problems.append(
                        Problem(
                            lineno,
                            FIELD_TAG,
                            MISMATCHED_CLOSING_TAG.format(
                                visible(qid), visible(block.qid), block.line
                            ),
                        )
                    )
                    block.clean = False
                if control is not None:
                    block.clean = False
                if not block.answer_read:
                    problems.append(
                        Problem(lineno, FIELD_LINE, MISSING_ANSWER.format(visible(block.qid)))
                    )
                    block.clean = False
                yield block
                block = None
                continue
            if block is not None:
                problems.append(
                    Problem(
                        lineno,
                        FIELD_TAG,
                        NESTED_BLOCK.format(
                            visible(qid), visible(block.qid), block.line, visible(block.qid)
                        ),
                    )
                )
                block.clean = False
                yield block
            block = AnswerBlock(qid, lineno, clean=control is None)
            if is_blank(qid):
                problems.append(Problem(lineno, FIELD_QID, EMPTY_FIELD.format(FIELD_QID)))
                block.clean = False
            elif known_qids is not None and qid not in known_qids:
                problems.append(Problem(lineno, FIELD_QID, UNKNOWN_QID.format(qid)))
                block.clean = False
            first_line = seen_qids.setdefault(qid, lineno)
            if first_line != lineno:
                problems.append(Problem(lineno, FIELD_QID, DUPLICATE_BLOCK.format(qid, first_line)))
                block.clean = False
            continue

        if block is None:
            if is_blank(line):
                problems.append(
                    Problem(lineno, FIELD_LINE, BLANK_LINE.format("an opening tag such as <D001>"))
                )
            else:
                problems.append(Problem(lineno, FIELD_LINE, OUTSIDE_BLOCK.format(excerpt(line))))
            continue
        if control is not None:
            block.clean = False
        if is_blank(line):
            expected = (
                f"{NUGGET_LINE_FORMAT} or </{block.qid}>"
                if block.answer_read
                else ANSWER_LINE_FORMAT
            )
            problems.append(Problem(lineno, FIELD_LINE, BLANK_LINE.format(expected)))
            block.clean = False
            continue
        if not block.answer_read:
            block.answer_read = True
            if not _read_answer_line(block, lineno, line, problems, max_answer_chars):
                block.clean = False
            continue

        block.nugget_lines += 1
        if block.nugget_lines > MAX_NUGGETS:
            problems.append(
                Problem(
                    lineno,
                    FIELD_LINE,
                    TOO_MANY_NUGGETS.format(block.nugget_lines, visible(block.qid), MAX_NUGGETS),
                )
            )
            block.clean = False
        nugget_num, nugget = nugget_line(lineno, block.qid, line)
        if nugget_num is not None:
            first_line = block.nugget_num_lines.setdefault(nugget_num, lineno)
            if first_line != lineno:
                problems.append(
                    Problem(
                        lineno,
                        FIELD_NUGGET_NUM,
                        DUPLICATE_NUGGET_NUM.format(nugget_num, visible(block.qid), first_line),
                    )
                )
                block.clean = False
        if nugget is None:
            block.clean = False
        else:
            block.nuggets.append(nugget)

    if block is not None:
        problems.append(
            Problem(
                block.line,
                FIELD_TAG,
                UNTERMINATED_BLOCK.format(visible(block.qid), visible(block.qid)),
            )
        )
        block.clean = False
        yield block
    if lineno == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format("answer block")))


def _read_answer_line(
    block: AnswerBlock[N], lineno: int, line: str, problems: list[Problem], max_chars: int
) -> bool:
    """Read ``[Answer];[Confidence]`` into `block`; False if it has a problem."""
    answer, separator, confidence_text = line.rpartition(";")
    if not separator:
        problems.append(Problem(lineno, FIELD_LINE, ANSWER_WITHOUT_SEPARATOR.format(excerpt(line))))
        return False
    ok = True
    if is_blank(answer):
        problems.append(Problem(lineno, FIELD_ANSWER, EMPTY_FIELD.format(FIELD_ANSWER)))
        ok = False
    elif len(answer) > max_chars:
        problems.append(
            Problem(lineno, FIELD_ANSWER, TOO_LONG.format(len(answer), FIELD_ANSWER, max_chars))
        )
        ok = False
    confidence = parse_int(confidence_text, MIN_CONFIDENCE, MAX_CONFIDENCE)
    if confidence is None:
        problems.append(
            Problem(
                lineno,
                FIELD_CONFIDENCE,
                BAD_INTEGER.format(
                    FIELD_CONFIDENCE, excerpt(confidence_text), MIN_CONFIDENCE, MAX_CONFIDENCE
                ),
            )
        )
        ok = False
    else:
        block.confidence = confidence
    block.answer = answer
    return ok
