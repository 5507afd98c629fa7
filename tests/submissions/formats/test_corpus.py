from __future__ import annotations

import io

import pytest

from submissions.formats.common import EMPTY_FIELD, EMPTY_FILE, Problem
from submissions.formats.corpus import (
    DOCID_WHITESPACE,
    DUPLICATE_CORPUS_DOCID,
    MAX_PASSAGE_CHARS,
    TEXT_TOO_LONG,
    CorpusPassage,
    iter_corpus,
    validate_corpus,
    write_corpus,
)
from submissions.formats.jsonl import MISSING_KEY, WRONG_TYPE
from tests.submissions.formats.support import TrickleReader, bio


def test_it_yields_each_passage_and_ignores_other_keys() -> None:
    problems: list[Problem] = []

    passages = list(
        iter_corpus(
            bio(
                '{"docid": "d1", "text": "First passage.", "title": "T"}\n'
                '{"text": "Second\\npassage.", "docid": "msmarco_passage_00_1"}\n'
            ),
            problems,
        )
    )

    assert problems == []
    assert passages == [
        CorpusPassage("d1", "First passage."),
        CorpusPassage("msmarco_passage_00_1", "Second\npassage."),
    ]


def test_it_yields_passages_as_the_file_is_read_not_after() -> None:
    data = b"".join(b'{"docid": "d%d", "text": "passage %d"}\n' % (i, i) for i in range(50_000))
    reader = TrickleReader(data, 1 << 16)
    problems: list[Problem] = []

    first = next(iter_corpus(reader, problems))

    assert first == CorpusPassage("d0", "passage 0")
    assert reader.position < len(data) // 10


@pytest.mark.parametrize(
    ("line", "problems"),
    [
        ('{"text": "t"}', [Problem(1, "docid", MISSING_KEY.format("docid", "a string"))]),
        (
            '{"docid": 17, "text": "t"}',
            [Problem(1, "docid", WRONG_TYPE.format("a number", "docid", "a string"))],
        ),
        ('{"docid": " ", "text": "t"}', [Problem(1, "docid", EMPTY_FIELD.format("docid"))]),
        ('{"docid": "d 1", "text": "t"}', [Problem(1, "docid", DOCID_WHITESPACE.format("d 1"))]),
        (
            '{"docid": "d\\u00a01", "text": "t"}',
            [Problem(1, "docid", DOCID_WHITESPACE.format("d\u00a01"))],
        ),
        ('{"docid": "d1"}', [Problem(1, "text", MISSING_KEY.format("text", "a string"))]),
        ('{"docid": "d1", "text": ""}', [Problem(1, "text", EMPTY_FIELD.format("text"))]),
        (
            '{"docid": "d1", "text": null}',
            [Problem(1, "text", WRONG_TYPE.format("null", "text", "a string"))],
        ),
        (
            '{"docid": "d1", "text": "' + "x" * (MAX_PASSAGE_CHARS + 1) + '"}',
            [Problem(1, "text", TEXT_TOO_LONG.format(MAX_PASSAGE_CHARS + 1, MAX_PASSAGE_CHARS))],
        ),
    ],
)
def test_each_bad_passage_is_reported_with_its_line_and_key(
    line: str, problems: list[Problem]
) -> None:
    found: list[Problem] = []

    assert list(iter_corpus(bio(line), found)) == []
    assert found == problems


def test_a_text_of_exactly_the_limit_is_accepted_and_the_limit_is_a_parameter() -> None:
    line = '{"docid": "d1", "text": "' + "x" * 10 + '"}'

    assert validate_corpus(bio(line), max_chars=10) == []
    assert validate_corpus(bio(line), max_chars=9) == [
        Problem(1, "text", TEXT_TOO_LONG.format(10, 9))
    ]


def test_a_docid_given_twice_is_refused_on_its_second_line() -> None:
    problems: list[Problem] = []

    passages = list(
        iter_corpus(
            bio(
                '{"docid": "d1", "text": "a"}\n'
                '{"docid": "d2", "text": "b"}\n'
                '{"docid": "d1", "text": "c"}\n'
            ),
            problems,
        )
    )

    assert problems == [Problem(3, "docid", DUPLICATE_CORPUS_DOCID.format("d1"))]
    assert passages == [CorpusPassage("d1", "a"), CorpusPassage("d2", "b")]


def test_every_problem_of_a_corpus_is_reported_at_once() -> None:
    problems = validate_corpus(
        bio('{"docid": "d1", "text": "a"}\nnot json\n\n{"docid": "d1", "text": 1}\n')
    )

    assert [(p.line, p.field) for p in problems] == [
        (2, "line"),
        (3, "line"),
        (4, "docid"),
        (4, "text"),
    ]


def test_an_empty_corpus_is_refused() -> None:
    assert validate_corpus(bio(b"")) == [Problem(0, "file", EMPTY_FILE.format("passage line"))]


def test_a_written_corpus_reads_back_to_its_passages() -> None:
    passages = [
        CorpusPassage("d1", "Caf\u00e9\tau lait.\nSecond line."),
        CorpusPassage("d#2", '"q"'),
    ]
    out = io.StringIO()
    write_corpus(passages, out)
    problems: list[Problem] = []

    assert list(iter_corpus(bio(out.getvalue()), problems)) == passages
    assert problems == []
