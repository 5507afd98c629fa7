"""Strict parsing of judge replies (grading.llm.parsing): a subtask's bare verdict, and
the verdict with its reason that an explanation request gets."""

from __future__ import annotations

import pytest

from grading.llm import parsing
from grading.llm.parsing import ReplyParseError, VerdictLabel, parse_verdict


@pytest.mark.parametrize(("raw", "verdict"), [("true", True), ("false", False),
                                              (" false\n", False)])
def test_it_parses_a_bare_verdict(raw: str, verdict: bool) -> None:
    assert parse_verdict(raw, field="entailed") == VerdictLabel(verdict=verdict)


def test_it_parses_a_verdict_with_its_reason_exactly() -> None:
    label = parse_verdict('{"correct": false, "reason": "Wrong year."}', field="correct",
                          with_reason=True)

    assert label == VerdictLabel(verdict=False, reason="Wrong year.")


def test_labels_are_frozen() -> None:
    label = parse_verdict("false", field="entailed")

    with pytest.raises(AttributeError):
        label.verdict = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", parsing.NOT_JSON.format(error="Expecting value: line 1 column 1 (char 0)")),
        ('"true"', parsing.WRONG_TYPE.format(field="entailed", expected="true or false",
                                             found='a string "true"')),
        ("1", parsing.WRONG_TYPE.format(field="entailed", expected="true or false",
                                        found="an integer 1")),
        ("null", parsing.WRONG_TYPE.format(field="entailed", expected="true or false",
                                           found="null")),
        ('{"entailed": true}', parsing.WRONG_TYPE.format(field="entailed",
                                                         expected="true or false",
                                                         found="an object")),
    ],
)
def test_a_malformed_bare_verdict_is_refused_with_its_reason(raw: str, message: str) -> None:
    with pytest.raises(ReplyParseError) as refused:
        parse_verdict(raw, field="entailed")

    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"entailed": true, "reason": "cut', None),
        ("[true]", parsing.NOT_AN_OBJECT.format(found="an array")),
        ('"yes"', parsing.NOT_AN_OBJECT.format(found='a string "yes"')),
        ('{"reason": "r"}', parsing.MISSING_FIELD.format(field="entailed")),
        ('{"entailed": true}', parsing.MISSING_FIELD.format(field="reason")),
        ('{"entailed": true, "reason": "r", "score": 1}',
         parsing.UNEXPECTED_FIELD.format(field="score")),
        ('{"entailed": true, "entailed": false, "reason": "r"}',
         parsing.DUPLICATE_FIELD.format(field="entailed")),
        ('{"entailed": "true", "reason": "r"}',
         parsing.WRONG_TYPE.format(field="entailed", expected="a boolean",
                                   found='a string "true"')),
        ('{"entailed": 1, "reason": "r"}',
         parsing.WRONG_TYPE.format(field="entailed", expected="a boolean", found="an integer 1")),
        ('{"entailed": null, "reason": "r"}',
         parsing.WRONG_TYPE.format(field="entailed", expected="a boolean", found="null")),
        ('{"entailed": true, "reason": ["r"]}',
         parsing.WRONG_TYPE.format(field="reason", expected="a string", found="an array")),
    ],
)
def test_a_malformed_verdict_with_reason_is_refused_with_its_reason(
    raw: str, message: str | None
) -> None:
    with pytest.raises(ReplyParseError) as refused:
        parse_verdict(raw, field="entailed", with_reason=True)

    if message is None:
        assert str(refused.value).startswith("reply is not valid JSON: Unterminated string")
    else:
        assert str(refused.value) == message
