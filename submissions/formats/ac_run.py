"""AC runs of NTCIR-19 R2C2: an answer with a 0-100 confidence and up to ten nuggets per
question, each citing a passage of a shared PR run (docs/formats.md, "AC runs")."""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from .answer_blocks import (
    FIELD_ANSWER,
    FIELD_NUGGET,
    FIELD_NUGGET_NUM,
    FIELD_RUN_NAME,
    MAX_NUGGETS,
    NUGGET_LINE_FORMAT,
    clean_records,
    read_answer_blocks,
)
from .common import (
    BAD_INTEGER,
    EMPTY_FIELD,
    FIELD_LINE,
    FIELD_PASSAGE_RANK,
    FIELD_QID,
    BinaryReader,
    ParseResult,
    PassageKey,
    Problem,
    TextSink,
    check_writable,
    excerpt,
    is_blank,
    parse_int,
)
from .control_characters import visible
from .limits import MAX_ANSWER_CHARS, TOO_LONG
from .pr_run import DEFAULT_MAX_RANK
from .run_names import is_pr_run_name

NUGGET_FIELD_COUNT = "found {} ';'-separated field(s); expected 4: " + NUGGET_LINE_FORMAT
BAD_PR_RUN_NAME = "found PRrunname {!r}; expected a PR run name [Team]-PG-[n] or [Team]-PO-[n]"
UNKNOWN_PR_RUN = (
    "found PRrunname {!r}, which is not a shared PR run of this campaign; expected one of: {}"
)
UNKNOWN_PASSAGE_RANK = (
    "found PassageRank {} of {} for qID {!r}, which that run did not return; "
    "expected one of its ranks for that question: {}"
)
#: PR run name -> qID -> the PassageRanks that run returned for it: the PR runs shared in
#: the campaign. `pr_run.returned_ranks` gives the inner mapping of one run.
SharedPrRuns: TypeAlias = Mapping[str, Mapping[str, Collection[int]]]


@dataclass(frozen=True, slots=True)
class NuggetRecord:
    """A nugget of an answer, citing the passage at `passage_key` as its support."""

    qid: str
    nugget_num: int
    passage_key: PassageKey
    text: str


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """One block of an AC run: the answer to question `qid`, how sure, and its nuggets."""

    qid: str
    answer: str
    confidence: int
    nuggets: tuple[NuggetRecord, ...]


def parse_ac_run(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    shared_pr_runs: SharedPrRuns | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
    max_answer_chars: int = MAX_ANSWER_CHARS,
) -> ParseResult[AnswerRecord]:
    """Parse an AC run, reporting every problem; PassageKeys are checked against
    `shared_pr_runs` when given (else only their form). A record per block without problems."""
    problems: list[Problem] = []

    def nugget_line(lineno: int, qid: str, line: str) -> tuple[int | None, NuggetRecord | None]:
        return read_nugget_line(
            lineno,
            qid,
            line,
            problems,
            shared_pr_runs=shared_pr_runs,
            max_rank=max_rank,
            max_nugget_chars=max_answer_chars,
        )

    blocks = read_answer_blocks(
        binary_file,
        problems,
        nugget_line,
        known_qids=known_qids,
        max_answer_chars=max_answer_chars,
    )
    return ParseResult(clean_records(blocks, AnswerRecord), problems)


def write_ac_run(records: Iterable[AnswerRecord], text_file: TextSink) -> None:
    """Write `records` as an AC run, one block each; ValueError for a value that would break
    the file's structure (`write_answer_block`)."""
    for record in records:
        write_answer_block(
            record.qid,
            record.answer,
            record.confidence,
            (format_nugget_line(nugget) for nugget in record.nuggets),
            text_file,
        )


def read_nugget_line(
    lineno: int,
    qid: str,
    line: str,
    problems: list[Problem],
    *,
    shared_pr_runs: SharedPrRuns | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
    max_nugget_chars: int = MAX_ANSWER_CHARS,
) -> tuple[int | None, NuggetRecord | None]:
    """Read ``[NuggetNum];[PRrunname];[PassageRank];[Nugget]``, reporting its problems: the
    NuggetNum if valid (for the block's uniqueness check) and the nugget if the line is clean."""
    before = len(problems)
    fields = line.split(";", 3)
    if len(fields) != 4:
        problems.append(Problem(lineno, FIELD_LINE, NUGGET_FIELD_COUNT.format(len(fields))))
        return None, None
    num_text, run_name, rank_text, text = fields
    nugget_num = parse_int(num_text, 1, MAX_NUGGETS)
    if nugget_num is None:
        problems.append(
            Problem(
                lineno,
                FIELD_NUGGET_NUM,
                BAD_INTEGER.format(FIELD_NUGGET_NUM, excerpt(num_text), 1, MAX_NUGGETS),
            )
        )
    run_ranks: Mapping[str, Collection[int]] | None = None
    if not is_pr_run_name(run_name):
        problems.append(Problem(lineno, FIELD_RUN_NAME, BAD_PR_RUN_NAME.format(excerpt(run_name))))
    elif shared_pr_runs is not None:
        run_ranks = shared_pr_runs.get(run_name)
        if run_ranks is None:
            runs = ", ".join(sorted(shared_pr_runs)) or "none"
            problems.append(Problem(lineno, FIELD_RUN_NAME, UNKNOWN_PR_RUN.format(run_name, runs)))
    rank = parse_int(rank_text, 1, max_rank)
    if rank is None:
        problems.append(
            Problem(
                lineno,
                FIELD_PASSAGE_RANK,
                BAD_INTEGER.format(FIELD_PASSAGE_RANK, excerpt(rank_text), 1, max_rank),
            )
        )
    elif run_ranks is not None:
        ranks = run_ranks.get(qid, ())
        if rank not in ranks:
            returned = ", ".join(str(r) for r in sorted(ranks)) or "none"
            problems.append(
                Problem(
                    lineno,
                    FIELD_PASSAGE_RANK,
                    UNKNOWN_PASSAGE_RANK.format(rank, run_name, visible(qid), returned),
                )
            )
    if is_blank(text):
        problems.append(Problem(lineno, FIELD_NUGGET, EMPTY_FIELD.format(FIELD_NUGGET)))
    elif len(text) > max_nugget_chars:
        message = TOO_LONG.format(len(text), FIELD_NUGGET, max_nugget_chars)
        problems.append(Problem(lineno, FIELD_NUGGET, message))
    if nugget_num is None or rank is None or len(problems) != before:
        return nugget_num, None
    return nugget_num, NuggetRecord(qid, nugget_num, PassageKey(run_name, rank), text)


def format_nugget_line(nugget: NuggetRecord) -> str:
    """``[NuggetNum];[PRrunname];[PassageRank];[Nugget]`` without a line break."""
    key = nugget.passage_key
    check_writable(key.run_name, FIELD_RUN_NAME, separator=";")
    check_writable(nugget.text, FIELD_NUGGET)
    return f"{nugget.nugget_num};{key.run_name};{key.rank};{nugget.text}"


def write_answer_block(
    qid: str, answer: str, confidence: int, nugget_lines: Iterable[str], text_file: TextSink
) -> None:
    """Write one ``<qID>`` block; ValueError for a line break, a ``;`` in the qID, or a qID
    starting with ``/`` (it would read as a closing tag)."""
    check_writable(qid, FIELD_QID, separator=";")
    if qid.startswith("/"):
        raise ValueError(f"{FIELD_QID} {qid!r} starts with '/'")
    check_writable(answer, FIELD_ANSWER)
    text_file.write(f"<{qid}>\n{answer};{confidence}\n")
    for line in nugget_lines:
        text_file.write(f"{line}\n")
    text_file.write(f"</{qid}>\n")
