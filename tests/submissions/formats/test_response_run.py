from __future__ import annotations

import io

import pytest

from submissions.formats.common import EMPTY_FIELD, Problem
from submissions.formats.jsonl import MISSING_KEY, UNKNOWN_KEY, WRONG_TYPE
from submissions.formats.response_run import (
    DUPLICATE_RESPONSE,
    NO_PASSAGES,
    PASSAGE_TOO_LONG,
    ResponsePassage,
    ResponseRecord,
    parse_response_run,
    response_passages,
    segment_docid,
    write_response_run,
)
from submissions.formats.segmenter import segment_text
from submissions.formats.trec_run import UNKNOWN_QUERY
from tests.submissions.formats.support import bio

QUERIES = frozenset({"q1", "q2"})


def words(n: int, word: str = "w") -> str:
    return " ".join(f"{word}{i}" for i in range(1, n + 1))


# --- the segmenter --------------------------------------------------------------------------


def test_short_sentences_are_packed_into_one_passage() -> None:
    text = "Dr. Smith went to Washington. He said hi.  It was 3.5 km away!"

    assert segment_text(text) == [text]


def test_a_passage_ends_at_the_sentence_that_would_take_it_past_100_words() -> None:
    first, second, third = words(60, "a") + ".", words(50, "b") + ".", words(40, "c") + "."

    assert segment_text(f"{first} {second} {third}") == [first, f"{second} {third}"]


def test_a_sentence_longer_than_100_words_is_cut_after_word_100() -> None:
    long_sentence = words(230) + "."
    tail = " ".join(long_sentence.split()[200:])

    passages = segment_text(f"{long_sentence} Short one.")

    assert [len(p.split()) for p in passages] == [100, 100, 32]
    assert passages[2] == f"{tail} Short one."


def test_passages_keep_the_text_as_written_between_their_first_and_last_word() -> None:
    text = "  First line.\n\n Second\tpara  here.  "

    assert segment_text(text) == ["First line.\n\n Second\tpara  here."]
    assert segment_text(text, max_words=2) == ["First line.", "Second\tpara", "here."]


def test_a_text_without_words_has_no_passage() -> None:
    assert segment_text(" \n\u3000") == []


def test_segments_are_ranked_from_one_with_run_colon_qid_colon_rank_docids() -> None:
    record = ResponseRecord("q1", words(150) + ".")

    passages = response_passages("WASEDA-gen_1", record)

    assert [(p.rank, p.docid) for p in passages] == [
        (1, "WASEDA-gen_1:q1:1"),
        (2, "WASEDA-gen_1:q1:2"),
    ]
    assert segment_docid("T-x", "q:7", 3) == "T-x:q:7:3"


def test_given_passages_are_used_as_they_are() -> None:
    record = ResponseRecord("q2", "ignored for segmenting", ("One.", "Two and three."))

    assert response_passages("T-r", record) == [
        ResponsePassage("q2", 1, "T-r:q2:1", "One."),
        ResponsePassage("q2", 2, "T-r:q2:2", "Two and three."),
    ]


# --- the file -------------------------------------------------------------------------------


def test_it_reads_one_response_per_line() -> None:
    result = parse_response_run(
        bio(
            '{"qid": "q1", "text": "A first answer.\\nWith a line break."}\n'
            '{"text": "Second.", "passages": ["Sec", "ond."], "qid": "q2"}\n'
        ),
        known_qids=QUERIES,
    )

    assert result.ok
    assert result.records == [
        ResponseRecord("q1", "A first answer.\nWith a line break."),
        ResponseRecord("q2", "Second.", ("Sec", "ond.")),
    ]


@pytest.mark.parametrize(
    ("line", "problems"),
    [
        ('{"text": "t"}', [Problem(1, "qid", MISSING_KEY.format("qid", "a string"))]),
        (
            '{"qid": 1, "text": "t"}',
            [Problem(1, "qid", WRONG_TYPE.format("a number", "qid", "a string"))],
        ),
        ('{"qid": "q9", "text": "t"}', [Problem(1, "qid", UNKNOWN_QUERY.format("q9"))]),
        ('{"qid": "q1"}', [Problem(1, "text", MISSING_KEY.format("text", "a string"))]),
        ('{"qid": "q1", "text": " \\n "}', [Problem(1, "text", EMPTY_FIELD.format("text"))]),
        (
            '{"qid": "q1", "text": "t", "passages": "t"}',
            [
                Problem(
                    1, "passages", WRONG_TYPE.format("a string", "passages", "a list of strings")
                )
            ],
        ),
        ('{"qid": "q1", "text": "t", "passages": []}', [Problem(1, "passages", NO_PASSAGES)]),
        (
            '{"qid": "q1", "text": "t", "passages": ["a", ""]}',
            [Problem(1, "passages[1]", EMPTY_FIELD.format("passages[1]"))],
        ),
        (
            '{"qid": "q1", "text": "t", "passages": ["a", "' + words(101) + '"]}',
            [Problem(1, "passages[1]", PASSAGE_TOO_LONG.format(101, "passages[1]", 100))],
        ),
        (
            '{"qid": "q1", "text": "t", "passage": ["a"]}',
            [Problem(1, "passage", UNKNOWN_KEY.format("passage", "'qid', 'text', 'passages'"))],
        ),
        (
            '{"qid": "", "text": 5}',
            [
                Problem(1, "qid", EMPTY_FIELD.format("qid")),
                Problem(1, "text", WRONG_TYPE.format("a number", "text", "a string")),
            ],
        ),
    ],
)
def test_each_bad_response_is_reported_with_its_line_and_key(
    line: str, problems: list[Problem]
) -> None:
    result = parse_response_run(bio(line), known_qids=QUERIES)

    assert result.problems == problems
    assert result.records == []


def test_a_second_response_to_a_query_is_refused() -> None:
    result = parse_response_run(bio('{"qid": "q1", "text": "a"}\n{"qid": "q1", "text": "b"}\n'))

    assert result.problems == [Problem(2, "qid", DUPLICATE_RESPONSE.format("q1", 1))]
    assert result.records == [ResponseRecord("q1", "a")]


def test_a_nul_escaped_in_a_text_is_refused_with_its_position() -> None:
    result = parse_response_run(bio('{"qid": "q1", "text": "ab\\u0000"}'))

    assert [(p.line, p.field) for p in result.problems] == [(1, "text")]
    assert result.problems[0].message.startswith(
        "found the control character U+0000 at character 3 "
    )


def test_a_written_run_reads_back_to_its_records() -> None:
    records = [
        ResponseRecord("q1", 'Caf\u00e9 \u2014 "quoted".\nNext line.'),
        ResponseRecord("q2", "Text.", ("Given passage.",)),
    ]
    out = io.StringIO()
    write_response_run(records, out)

    assert (
        out.getvalue().splitlines()[1]
        == '{"qid": "q2", "text": "Text.", "passages": ["Given passage."]}'
    )
    assert parse_response_run(bio(out.getvalue()), known_qids=QUERIES).records == records
