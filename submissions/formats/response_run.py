"""Response runs of a response track: JSON Lines, ``{"qid", "text"}`` per query, with
optional ``"passages"`` (docs/formats.md, "Response run")."""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from .common import BinaryReader, ParseResult, Problem, TextSink, excerpt
from .jsonl import (
    dump_line,
    iter_json_objects,
    string_list_value,
    string_value,
    unknown_keys,
)
from .segmenter import DEFAULT_LANGUAGE, MAX_PASSAGE_WORDS, segment_text
from .trec_run import UNKNOWN_QUERY

RESPONSE_EXAMPLE = '{"qid": "q1", "text": "..."}'

DUPLICATE_RESPONSE = (
    "found a second response for qid {!r} (the first is on line {}); "
    "expected one response per query"
)
NO_PASSAGES = "found an empty list of passages; expected at least one (or no 'passages' key)"
PASSAGE_TOO_LONG = "found {} words in {}; expected at most {} words per passage"

KEY_QID = "qid"
KEY_TEXT = "text"
KEY_PASSAGES = "passages"
RESPONSE_KEYS = (KEY_QID, KEY_TEXT, KEY_PASSAGES)


@dataclass(frozen=True, slots=True)
class ResponseRecord:
    """One line of a response run: `passages` are the participant's own segments or None (to
    segment `text`); `line` is where it was read and is left out of comparisons."""

    qid: str
    text: str
    passages: tuple[str, ...] | None = None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class ResponsePassage:
    """A segment of a response: what is graded, like a passage of a ranking run."""

    qid: str
    rank: int
    docid: str
    text: str


def segment_docid(run_name: str, qid: str, rank: int) -> str:
    """The docid of segment `rank` of run `run_name`'s response to `qid`: ``RUN:qid:i``."""
    return f"{run_name}:{qid}:{rank}"


def response_passages(
    run_name: str, record: ResponseRecord, *, language: str = DEFAULT_LANGUAGE
) -> list[ResponsePassage]:
    """The passages of one response, ranked 1, 2, ... in text order: the participant's own,
    else the text's segments."""
    texts = record.passages
    if texts is None:
        texts = tuple(segment_text(record.text, language=language))
    return [
        ResponsePassage(record.qid, rank, segment_docid(run_name, record.qid, rank), text)
        for rank, text in enumerate(texts, start=1)
    ]


def parse_response_run(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    max_words: int = MAX_PASSAGE_WORDS,
) -> ParseResult[ResponseRecord]:
    """Parse a response run, a line at a time, reporting every problem; a record per line
    without problems."""
    problems: list[Problem] = []
    records: list[ResponseRecord] = []
    first_lines: dict[str, int] = {}  # qid -> line of its response
    for lineno, obj in iter_json_objects(
        binary_file, problems, example=RESPONSE_EXAMPLE, what="response line"
    ):
        before = len(problems)
        unknown_keys(obj, RESPONSE_KEYS, lineno, problems)
        qid = string_value(obj, KEY_QID, lineno, problems)
        if qid is not None:
            if known_qids is not None and qid not in known_qids:
                problems.append(Problem(lineno, KEY_QID, UNKNOWN_QUERY.format(excerpt(qid))))
            first_line = first_lines.setdefault(qid, lineno)
            if first_line != lineno:
                problems.append(
                    Problem(lineno, KEY_QID, DUPLICATE_RESPONSE.format(excerpt(qid), first_line))
                )
        text = string_value(obj, KEY_TEXT, lineno, problems, line_breaks=True)
        passages = None
        if KEY_PASSAGES in obj:
            passages = _passages(obj[KEY_PASSAGES], lineno, problems, max_words)
        if len(problems) == before and qid is not None and text is not None:
            records.append(ResponseRecord(qid, text, passages, lineno))
    return ParseResult(records, problems)


def write_response_run(records: Iterable[ResponseRecord], text_file: TextSink) -> None:
    """Write `records` as a response run, one JSON object per line; ``passages`` only when a
    record has them."""
    for record in records:
        obj: dict[str, object] = {KEY_QID: record.qid, KEY_TEXT: record.text}
        if record.passages is not None:
            obj[KEY_PASSAGES] = list(record.passages)
        text_file.write(dump_line(obj))


def _passages(
    value: object, lineno: int, problems: list[Problem], max_words: int
) -> tuple[str, ...] | None:
    passages = string_list_value(value, KEY_PASSAGES, lineno, problems, line_breaks=True)
    if passages is None:
        return None
    if not passages:
        problems.append(Problem(lineno, KEY_PASSAGES, NO_PASSAGES))
        return None
    too_long = False
    for index, passage in enumerate(passages):
        words = len(passage.split())
        if words > max_words:
            where = f"{KEY_PASSAGES}[{index}]"
            problems.append(
                Problem(lineno, where, PASSAGE_TOO_LONG.format(words, where, max_words))
            )
            too_long = True
    return None if too_long else passages
