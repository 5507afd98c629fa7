from __future__ import annotations

import io

import pytest

from submissions.formats.common import EMPTY_FIELD, Problem
from submissions.formats.control_characters import CONTROL_CHARACTER_IN_VALUE, NO_CONTROLS
from submissions.formats.jsonl import MISSING_KEY, UNKNOWN_KEY, WRONG_TYPE
from submissions.formats.test_bank import (
    BAD_TARGET,
    BANK_KEYS,
    DUPLICATE_ITEM,
    DUPLICATE_QUERY_BANK,
    ITEM_OF_ANOTHER_QUERY,
    TWO_ANSWER_KEYS,
    BankItem,
    QueryBank,
    default_item_id,
    parse_test_bank,
    write_test_bank,
)
from submissions.formats.trec_run import UNKNOWN_QUERY
from tests.submissions.formats.support import bio

# MD5("hello"), RFC 1321's algorithm; the value every MD5 implementation gives.
HELLO_MD5 = "5d41402abc4b2a76b9719d911017c592"


def written(banks: list[QueryBank]) -> str:
    out = io.StringIO()
    write_test_bank(banks, out)
    return out.getvalue()


def test_an_item_id_defaults_to_query_id_slash_md5_of_the_stripped_text() -> None:
    assert default_item_id("q1", "  hello\n") == f"q1/{HELLO_MD5}"


def test_it_reads_the_shape_of_design_section_10() -> None:
    result = parse_test_bank(
        bio(
            '{"query_id": "q1", "query_text": "Who won?", "info": {"prompt_target": "questions"}, '
            '"items": [{"question_id": "q1/x", "question_text": "Which team won?", '
            '"answers": ["Ajax"]}, '
            '{"question_text": "hello"}]}\n'
            '{"query_id": "q2", "query_text": "Why?", "info": {"prompt_target": "nuggets"}, '
            '"items": [{"nugget_id": "n1", "nugget_text": "It rained."}]}\n'
        ),
        known_qids={"q1", "q2"},
    )

    assert result.ok
    assert result.records == [
        QueryBank(
            "q1",
            "Who won?",
            "questions",
            (BankItem("q1/x", "Which team won?", ("Ajax",)), BankItem(f"q1/{HELLO_MD5}", "hello")),
        ),
        QueryBank("q2", "Why?", "nuggets", (BankItem("n1", "It rained."),)),
    ]


def test_it_reads_a_file_the_workbench_wrote() -> None:
    # The workbench's QueryNuggetBank / QueryQuestionBank as its pydantic .json() writes
    # them: its own keys and order, gold_answers, generation details in info.
    line = (
        '{"query_id": "940", "test_collection": "DL20", "query_text": "rock n roll", '
        '"info": {"gpt_model": "gpt-3.5-turbo", "format_instruction": "json", '
        '"prompt_target": "questions"}, "hash": 1243234, "items": [{"query_id": "940", '
        '"question_id": "940/abc", "question_text": "Who?", "gold_answers": ["Elvis"]}]}\n'
        '{"query_id": "941", "test_collection": "DL20", "query_text": "jazz", "hash": 1243234, '
        '"items": [{"query_id": "941", "info": {"x": 1}, "nugget_id": "941/n", '
        '"nugget_text": "Swing."}]}\n'
    )

    result = parse_test_bank(bio(line))

    assert result.ok
    assert result.records == [
        QueryBank("940", "rock n roll", "questions", (BankItem("940/abc", "Who?", ("Elvis",)),)),
        QueryBank("941", "jazz", "nuggets", (BankItem("941/n", "Swing."),)),
    ]


def test_it_writes_the_workbench_shape_with_json_dumps_defaults() -> None:
    banks = [
        QueryBank(
            "q1",
            "Caf\u00e9?",
            "questions",
            (BankItem("q1/a", "Where?", ("Paris", "France")), BankItem("q1/b", "When?")),
        ),
        QueryBank("q2", "Why?", "nuggets", ()),
    ]

    assert written(banks) == (
        '{"query_id": "q1", "query_text": "Caf\\u00e9?", "info": {"prompt_target": "questions"}, '
        '"items": [{"question_id": "q1/a", "question_text": "Where?", '
        '"answers": ["Paris", "France"]}, '
        '{"question_id": "q1/b", "question_text": "When?"}]}\n'
        '{"query_id": "q2", "query_text": "Why?", "info": {"prompt_target": "nuggets"}, '
        '"items": []}\n'
    )


def test_its_own_output_reads_back_and_writes_again_byte_for_byte() -> None:
    banks = [
        QueryBank(
            "q1", "A?", "questions", (BankItem("q1/a", "B?", ()), BankItem("q1/c", "D?", ("e",)))
        ),
        QueryBank("q2", "F?", "nuggets", (BankItem(default_item_id("q2", "G."), "G."),)),
    ]
    first = written(banks)

    result = parse_test_bank(bio(first))

    assert result.records == banks
    assert written(result.records) == first


BANK_KEY_LIST = ", ".join(repr(key) for key in BANK_KEYS)
QUESTION_KEYS = (
    "'question_id', 'question_text', 'answers', 'gold_answers', 'query_id', 'facet_id', 'info'"
)
NUGGET_KEYS = "'nugget_id', 'nugget_text', 'query_id', 'facet_id', 'info'"


def line(items: str = '[{"question_text": "Q?"}]', **extra: str) -> str:
    fields = {"query_id": '"q1"', "query_text": '"T"', "items": items, **extra}
    return "{" + ", ".join(f'"{key}": {value}' for key, value in fields.items()) + "}"


@pytest.mark.parametrize(
    ("content", "problems"),
    [
        (
            '{"query_text": "T", "items": []}',
            [Problem(1, "query_id", MISSING_KEY.format("query_id", "a string"))],
        ),
        (
            '{"query_id": "q1", "items": []}',
            [Problem(1, "query_text", MISSING_KEY.format("query_text", "a string"))],
        ),
        (
            '{"query_id": "q1", "query_text": "T"}',
            [Problem(1, "items", MISSING_KEY.format("items", "a list of objects"))],
        ),
        (
            line(items='{"a": 1}'),
            [Problem(1, "items", WRONG_TYPE.format("an object", "items", "a list of objects"))],
        ),
        (
            line(items='["Q?"]'),
            [Problem(1, "items[0]", WRONG_TYPE.format("a string", "items[0]", "an object"))],
        ),
        (line(query_id='"q9"'), [Problem(1, "query_id", UNKNOWN_QUERY.format("q9"))]),
        (line(query_text='"  "'), [Problem(1, "query_text", EMPTY_FIELD.format("query_text"))]),
        (
            line(info='"questions"'),
            [Problem(1, "info", WRONG_TYPE.format("a string", "info", "an object"))],
        ),
        (
            line(info='{"prompt_target": "exam"}'),
            [Problem(1, "info.prompt_target", BAD_TARGET.format("exam"))],
        ),
        (
            line(info='{"prompt_target": 2}'),
            [Problem(1, "info.prompt_target", BAD_TARGET.format("a number"))],
        ),
        (
            line(extra_key="1"),
            [Problem(1, "extra_key", UNKNOWN_KEY.format("extra_key", BANK_KEY_LIST))],
        ),
        (
            line(items='[{"question_id": "q1/a"}]'),
            [Problem(1, "items[0].question_text", MISSING_KEY.format("question_text", "a string"))],
        ),
        (
            line(items='[{"question_text": "Q?", "answer": ["a"]}]'),
            [Problem(1, "items[0].answer", UNKNOWN_KEY.format("answer", QUESTION_KEYS))],
        ),
        (
            line(
                items='[{"nugget_text": "N.", "answers": ["a"]}]',
                info='{"prompt_target": "nuggets"}',
            ),
            [Problem(1, "items[0].answers", UNKNOWN_KEY.format("answers", NUGGET_KEYS))],
        ),
        (
            line(items='[{"question_text": "Q?", "answers": "a"}]'),
            [
                Problem(
                    1,
                    "items[0].answers",
                    WRONG_TYPE.format("a string", "items[0].answers", "a list of strings"),
                )
            ],
        ),
        (
            line(items='[{"question_text": "Q?", "answers": ["a"], "gold_answers": ["a"]}]'),
            [Problem(1, "items[0]", TWO_ANSWER_KEYS.format("items[0]"))],
        ),
        (
            line(items='[{"question_text": "Q?", "question_id": "q1\\tx"}]'),
            [
                Problem(
                    1,
                    "items[0].question_id",
                    CONTROL_CHARACTER_IN_VALUE.format(9, 3, "items[0].question_id", NO_CONTROLS),
                )
            ],
        ),
        (
            line(items='[{"question_text": "Q?", "query_id": "q2"}]'),
            [Problem(1, "items[0].query_id", ITEM_OF_ANOTHER_QUERY.format("q2", "items[0]", "q1"))],
        ),
        (
            line(items='[{"question_text": "Q?"}, {"question_text": " Q? "}]'),
            [
                Problem(
                    1, "items[1].question_id", DUPLICATE_ITEM.format(default_item_id("q1", "Q?"), 1)
                )
            ],
        ),
    ],
)
def test_each_bad_line_is_reported_with_its_line_and_key(
    content: str, problems: list[Problem]
) -> None:
    result = parse_test_bank(bio(content), known_qids={"q1", "q2"})

    assert result.problems == problems
    assert result.records == []


def test_a_query_or_an_item_id_given_twice_is_reported_against_its_first_line() -> None:
    result = parse_test_bank(
        bio(
            line(items='[{"question_id": "x", "question_text": "A?"}]')
            + "\n"
            + line(query_id='"q2"', items='[{"question_id": "x", "question_text": "B?"}]')
            + "\n"
            + line(items="[]")
            + "\n"
        )
    )

    assert result.problems == [
        Problem(2, "items[0].question_id", DUPLICATE_ITEM.format("x", 1)),
        Problem(3, "query_id", DUPLICATE_QUERY_BANK.format("q1", 1)),
    ]
    assert [bank.query_id for bank in result.records] == ["q1"]


def test_the_writer_refuses_answers_on_a_nugget_and_an_unknown_target() -> None:
    with pytest.raises(ValueError, match="only questions"):
        written([QueryBank("q1", "T", "nuggets", (BankItem("n", "N.", ("a",)),))])
    with pytest.raises(ValueError, match="neither"):
        written([QueryBank("q1", "T", "exam", ())])
