"""Strict parsing of judge replies (grading.llm.parsing)."""

from __future__ import annotations

import json

import pytest

from grading.llm import parsing
from grading.llm.parsing import (
    AnswerLabel,
    EntailmentLabel,
    ReplyParseError,
    parse_answer,
    parse_entailment,
)


def answer_reply(**fields: object) -> str:
    reply: dict[str, object] = {
        "reason": "Mackie is in both films.",
        "correct": True,
        "nugget_reasons": {"1": "names the 2004 cast", "2": "names Captain America"},
        "relevant": [2, 1],
    }
    reply.update(fields)
    return json.dumps(reply)


def test_it_parses_an_entailment_reply_exactly() -> None:
    label = parse_entailment('{"entailed": true, "reason": "The passage says so."}')

    assert label == EntailmentLabel(entailed=True, reason="The passage says so.")


def test_it_parses_an_answer_reply_exactly() -> None:
    label = parse_answer(answer_reply(), shown=[1, 2])

    assert label == AnswerLabel(
        correct=True,
        reason="Mackie is in both films.",
        relevant=(1, 2),
        nugget_reasons={1: "names the 2004 cast", 2: "names Captain America"},
    )


def test_it_accepts_an_answer_reply_when_no_nugget_was_shown() -> None:
    label = parse_answer(answer_reply(nugget_reasons={}, relevant=[], correct=False), shown=[])

    assert label.relevant == ()
    assert label.nugget_reasons == {}


def test_relevant_nuggets_of_an_incorrect_answer_are_dropped() -> None:
    label = parse_answer(answer_reply(correct=False, relevant=[1, 2]), shown=[1, 2])

    assert label.correct is False
    assert label.relevant == ()
    assert label.nugget_reasons == {1: "names the 2004 cast", 2: "names Captain America"}


def test_repeated_relevant_nuggets_count_once() -> None:
    assert parse_answer(answer_reply(relevant=[2, 2, 1]), shown=[1, 2]).relevant == (1, 2)


def test_labels_are_frozen() -> None:
    label = parse_entailment('{"entailed": false, "reason": "no"}')

    with pytest.raises(AttributeError):
        label.entailed = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", parsing.NOT_JSON.format(error="Expecting value: line 1 column 1 (char 0)")),
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
def test_a_malformed_entailment_reply_is_refused_with_its_reason(
    raw: str, message: str | None
) -> None:
    with pytest.raises(ReplyParseError) as refused:
        parse_entailment(raw)

    if message is None:
        assert str(refused.value).startswith("reply is not valid JSON: Unterminated string")
    else:
        assert str(refused.value) == message


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"correct": "yes"},
         parsing.WRONG_TYPE.format(field="correct", expected="a boolean", found='a string "yes"')),
        ({"reason": 3},
         parsing.WRONG_TYPE.format(field="reason", expected="a string", found="an integer 3")),
        ({"relevant": "1,2"},
         parsing.WRONG_TYPE.format(field="relevant", expected="an array",
                                   found='a string "1,2"')),
        ({"relevant": [1, "2"]}, parsing.NOT_A_NUGGET_NUMBER.format(field="relevant", found="2")),
        ({"relevant": [1, True]},
         parsing.NOT_A_NUGGET_NUMBER.format(field="relevant", found=True)),
        ({"relevant": [1.0]}, parsing.NOT_A_NUGGET_NUMBER.format(field="relevant", found=1.0)),
        ({"relevant": [1, 7]},
         parsing.UNKNOWN_NUGGET.format(field="relevant", number=7, shown="1, 2")),
        ({"nugget_reasons": ["a", "b"]},
         parsing.WRONG_TYPE.format(field="nugget_reasons", expected="an object",
                                   found="an array")),
        ({"nugget_reasons": {"1": "a"}}, parsing.MISSING_NUGGET_REASON.format(number=2)),
        ({"nugget_reasons": {"1": "a", "2": "b", "3": "c"}},
         parsing.UNKNOWN_NUGGET.format(field="nugget_reasons", number=3, shown="1, 2")),
        ({"nugget_reasons": {"1": "a", "02": "b"}},
         parsing.NOT_A_NUGGET_NUMBER.format(field="nugget_reasons", found="02")),
        ({"nugget_reasons": {"1": "a", "two": "b"}},
         parsing.NOT_A_NUGGET_NUMBER.format(field="nugget_reasons", found="two")),
        ({"nugget_reasons": {"1": "a", "2": None}},
         parsing.WRONG_TYPE.format(field="nugget_reasons.2", expected="a string",
                                   found="null")),
        ({"extra": 1}, parsing.UNEXPECTED_FIELD.format(field="extra")),
    ],
)
def test_a_malformed_answer_reply_is_refused_with_its_reason(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ReplyParseError) as refused:
        parse_answer(answer_reply(**fields), shown=[1, 2])

    assert str(refused.value) == message


def test_an_answer_reply_without_its_verdict_is_refused() -> None:
    reply = json.loads(answer_reply())
    del reply["correct"]

    with pytest.raises(ReplyParseError, match=r"^reply lacks the field 'correct'$"):
        parse_answer(json.dumps(reply), shown=[1, 2])


def test_a_relevant_nugget_is_refused_when_none_was_shown() -> None:
    with pytest.raises(ReplyParseError) as refused:
        parse_answer(answer_reply(nugget_reasons={}, relevant=[1]), shown=[])

    assert str(refused.value) == parsing.UNKNOWN_NUGGET.format(
        field="relevant", number=1, shown="none")
