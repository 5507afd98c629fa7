"""The JSONL reading that response runs, the corpus and the test bank share."""

from __future__ import annotations

import pytest

from submissions.formats.common import (
    BLANK_LINE,
    CARRIAGE_RETURN,
    EMPTY_FIELD,
    EMPTY_FILE,
    INVALID_UTF8,
    Problem,
)
from submissions.formats.control_characters import (
    CONTROL_CHARACTER,
    CONTROL_CHARACTER_IN_VALUE,
    NO_CONTROLS,
    NO_CONTROLS_BUT_TAB,
    NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS,
)
from submissions.formats.jsonl import (
    DUPLICATE_KEY,
    INVALID_JSON,
    LONE_SURROGATE,
    MISSING_KEY,
    NOT_AN_OBJECT,
    TOO_DEEP,
    TOO_LONG,
    UNKNOWN_KEY,
    WRONG_TYPE,
    dump_line,
    iter_json_objects,
    string_list_value,
    string_value,
    unknown_keys,
)
from tests.submissions.formats.support import bio

EXAMPLE = '{"k": "v"}'
EXPECTED = f"one JSON object per line, such as {EXAMPLE}"


def read(content: str | bytes) -> tuple[list[tuple[int, dict[str, object]]], list[Problem]]:
    problems: list[Problem] = []
    objects = list(iter_json_objects(bio(content), problems, example=EXAMPLE, what="thing"))
    return objects, problems


def test_it_yields_each_object_with_its_line() -> None:
    objects, problems = read('\ufeff{"a": 1}\r\n{"b": [2]}\n{"c": {"d": null}}')

    assert problems == []
    assert objects == [(1, {"a": 1}), (2, {"b": [2]}), (3, {"c": {"d": None}})]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", Problem(0, "file", EMPTY_FILE.format("thing"))),
        ("   ", Problem(1, "line", BLANK_LINE.format(EXPECTED))),
        (
            '{"a": 1',
            Problem(1, "line", INVALID_JSON.format("Expecting ',' delimiter", 8, EXPECTED)),
        ),
        (
            "{'a': 1}",
            Problem(
                1,
                "line",
                INVALID_JSON.format(
                    "Expecting property name enclosed in double quotes", 2, EXPECTED
                ),
            ),
        ),
        ('{"a": 1} {"b": 2}', Problem(1, "line", INVALID_JSON.format("Extra data", 10, EXPECTED))),
        ("[1, 2]", Problem(1, "line", NOT_AN_OBJECT.format("a list", EXPECTED))),
        ('"text"', Problem(1, "line", NOT_AN_OBJECT.format("a string", EXPECTED))),
        ("null", Problem(1, "line", NOT_AN_OBJECT.format("null", EXPECTED))),
        ('{"a": 1, "a": 2}', Problem(1, "line", DUPLICATE_KEY.format("a"))),
        ('{"a": {"b": 1, "b": 1}}', Problem(1, "line", DUPLICATE_KEY.format("b"))),
        ('{"a": "x\x00"}', Problem(1, "line", CONTROL_CHARACTER.format(0, 9, NO_CONTROLS_BUT_TAB))),
        (
            '{"a":\x1b 1}',
            Problem(1, "line", CONTROL_CHARACTER.format(0x1B, 6, NO_CONTROLS_BUT_TAB)),
        ),
        ('{"a": 1}\r{"b": 2}', Problem(1, "line", CARRIAGE_RETURN)),
        (b'{"a": "\xc3"}', Problem(1, "line", INVALID_UTF8.format("0xC3", 8))),
        (
            '{"a": ' + "1" * 5000 + "}",
            Problem(1, "line", INVALID_JSON.format(TOO_LONG, 1, EXPECTED)),
        ),
        ("[" * 100_000, Problem(1, "line", INVALID_JSON.format(TOO_DEEP, 1, EXPECTED))),
    ],
)
def test_each_line_that_is_not_a_json_object_is_reported(
    content: str | bytes, problem: Problem
) -> None:
    objects, problems = read(content)

    assert objects == []
    assert problems == [problem]


def test_a_bad_line_does_not_stop_the_lines_after_it() -> None:
    objects, problems = read('{"a": 1}\n\n{"a": \n{"a": 3}\n')

    assert objects == [(1, {"a": 1}), (4, {"a": 3})]
    assert [problem.line for problem in problems] == [2, 3]


@pytest.mark.parametrize(
    ("obj", "line_breaks", "problem"),
    [
        ({}, False, Problem(7, "p.k", MISSING_KEY.format("k", "a string"))),
        ({"k": 3}, False, Problem(7, "p.k", WRONG_TYPE.format("a number", "p.k", "a string"))),
        ({"k": True}, False, Problem(7, "p.k", WRONG_TYPE.format("true", "p.k", "a string"))),
        ({"k": None}, False, Problem(7, "p.k", WRONG_TYPE.format("null", "p.k", "a string"))),
        ({"k": ["v"]}, False, Problem(7, "p.k", WRONG_TYPE.format("a list", "p.k", "a string"))),
        ({"k": {}}, False, Problem(7, "p.k", WRONG_TYPE.format("an object", "p.k", "a string"))),
        ({"k": ""}, False, Problem(7, "p.k", EMPTY_FIELD.format("p.k"))),
        ({"k": " \u3000\n"}, True, Problem(7, "p.k", EMPTY_FIELD.format("p.k"))),
        (
            {"k": "a\x00b"},
            True,
            Problem(
                7,
                "p.k",
                CONTROL_CHARACTER_IN_VALUE.format(0, 2, "p.k", NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS),
            ),
        ),
        (
            {"k": "a\nb"},
            False,
            Problem(7, "p.k", CONTROL_CHARACTER_IN_VALUE.format(10, 2, "p.k", NO_CONTROLS)),
        ),
        (
            {"k": "a\tb"},
            False,
            Problem(7, "p.k", CONTROL_CHARACTER_IN_VALUE.format(9, 2, "p.k", NO_CONTROLS)),
        ),
        (
            {"k": "ab\x85"},
            True,
            Problem(
                7,
                "p.k",
                CONTROL_CHARACTER_IN_VALUE.format(
                    0x85, 3, "p.k", NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS
                ),
            ),
        ),
        ({"k": "a\ud800"}, True, Problem(7, "p.k", LONE_SURROGATE.format(0xD800, 2, "p.k"))),
    ],
)
def test_a_string_value_must_be_a_non_blank_string_of_plain_text(
    obj: dict[str, object], line_breaks: bool, problem: Problem
) -> None:
    problems: list[Problem] = []

    assert string_value(obj, "k", 7, problems, path="p.", line_breaks=line_breaks) is None
    assert problems == [problem]


def test_a_text_may_hold_tabs_and_line_breaks() -> None:
    problems: list[Problem] = []

    assert string_value({"k": "a\tb\r\nc"}, "k", 1, problems, line_breaks=True) == "a\tb\r\nc"
    assert problems == []


def test_every_bad_element_of_a_list_of_strings_is_named_by_its_index() -> None:
    problems: list[Problem] = []

    assert string_list_value(["ok", 1, "", "ok"], "xs", 2, problems, line_breaks=True) is None
    assert problems == [
        Problem(2, "xs[1]", WRONG_TYPE.format("a number", "xs[1]", "a string")),
        Problem(2, "xs[2]", EMPTY_FIELD.format("xs[2]")),
    ]
    assert string_list_value(["a", "b"], "xs", 2, [], line_breaks=True) == ("a", "b")
    assert string_list_value([], "xs", 2, [], line_breaks=True) == ()


def test_unknown_keys_are_each_reported_with_the_keys_allowed() -> None:
    problems: list[Problem] = []

    unknown_keys({"a": 1, "passage": 2, "x": 3}, ("a", "b"), 4, problems, path="items[0].")

    assert problems == [
        Problem(4, "items[0].passage", UNKNOWN_KEY.format("passage", "'a', 'b'")),
        Problem(4, "items[0].x", UNKNOWN_KEY.format("x", "'a', 'b'")),
    ]


def test_a_line_is_written_with_json_dumps_defaults_in_key_order() -> None:
    assert dump_line({"z": "\u00e9\n", "a": [1, {"b": None}]}) == (
        '{"z": "\\u00e9\\n", "a": [1, {"b": null}]}\n'
    )
