"""Strict parsing of judge replies into labels (docs/judging.md).

A reply is accepted only when it is exactly the JSON object its schema describes: no
missing or extra fields, no repeated keys, booleans that are booleans (not 0/1 or
"true"), and nugget numbers that were shown in the prompt. Anything else raises
`ReplyParseError` with a message saying what was found; the client retries such a reply
and finally flags it `needs_review`, so a malformed reply is never silently counted.

Two normalisations, both harmless and documented here because they change the reply:
- `relevant` is sorted and its duplicates dropped (grammars cannot express uniqueItems);
- `relevant` is emptied when `correct` is false. The task asks "assuming the nuggets are
  factually correct, is the answer correct, and if so, which nuggets helped to deduce
  it?", so a nugget is relevant only for a correct answer; for an incorrect one every
  entailed nugget is N, whatever the model listed. The per-nugget reasons are kept.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

NOT_JSON = "reply is not valid JSON: {error}"
NOT_AN_OBJECT = "reply must be a JSON object, found {found}"
DUPLICATE_FIELD = "reply repeats the field {field!r}"
MISSING_FIELD = "reply lacks the field {field!r}"
UNEXPECTED_FIELD = "reply has an unexpected field {field!r}"
WRONG_TYPE = "field {field!r} must be {expected}, found {found}"
NOT_A_NUGGET_NUMBER = "{field} holds {found!r}, which is not a nugget number"
UNKNOWN_NUGGET = "{field} names nugget {number}, which was not shown (shown: {shown})"
MISSING_NUGGET_REASON = "nugget_reasons lacks a reason for nugget {number}"

ENTAILMENT_FIELDS = ("entailed", "reason")
ANSWER_FIELDS = ("reason", "correct", "nugget_reasons", "relevant")


class ReplyParseError(ValueError):
    """The judge's reply is not a valid label; the message says why."""


@dataclass(frozen=True)
class EntailmentLabel:
    """Bogus-nugget identification: does the passage entail the nugget?"""

    entailed: bool
    reason: str


@dataclass(frozen=True)
class AnswerLabel:
    """Answer evaluation: is the answer correct, and which nuggets helped (if so)?

    `relevant` is sorted, and empty unless `correct`. `nugget_reasons` has one reason
    per nugget shown, keyed by NuggetNum.
    """

    correct: bool
    reason: str
    relevant: tuple[int, ...]
    nugget_reasons: dict[int, str]


@dataclass(frozen=True)
class VerdictLabel:
    """A v2 subtask's reply: its one boolean, and a reason only when one was asked for."""

    verdict: bool
    reason: str = ""


def parse_verdict(raw: str, *, field: str, with_reason: bool = False) -> VerdictLabel:
    """Parse a bare `true`/`false` (or `{"<field>": bool, "reason": str}` when asked)."""
    if with_reason:
        reply = _load_object(raw, (field, "reason"))
        return VerdictLabel(verdict=_typed(reply, field, bool, "a boolean"),
                            reason=_typed(reply, "reason", str, "a string"))
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ReplyParseError(NOT_JSON.format(error=error)) from None
    if not isinstance(value, bool):
        raise ReplyParseError(WRONG_TYPE.format(field=field, expected="true or false",
                                                found=_kind(value)))
    return VerdictLabel(verdict=value)


def parse_entailment(raw: str) -> EntailmentLabel:
    """Parse an entailment reply `{"entailed": bool, "reason": str}`."""
    reply = _load_object(raw, ENTAILMENT_FIELDS)
    return EntailmentLabel(
        entailed=_typed(reply, "entailed", bool, "a boolean"),
        reason=_typed(reply, "reason", str, "a string"),
    )


def parse_answer(raw: str, *, shown: Collection[int]) -> AnswerLabel:
    """Parse an answer reply for a prompt that showed the nuggets numbered `shown`.

    Expects `{"reason": str, "correct": bool, "nugget_reasons": {"<num>": str, ...},
    "relevant": [num, ...]}` with a reason for every shown nugget and nothing else.
    """
    shown_set = set(shown)
    shown_text = ", ".join(str(number) for number in sorted(shown_set)) or "none"
    reply = _load_object(raw, ANSWER_FIELDS)
    correct = _typed(reply, "correct", bool, "a boolean")
    reason = _typed(reply, "reason", str, "a string")

    raw_reasons = _typed(reply, "nugget_reasons", dict, "an object")
    nugget_reasons: dict[int, str] = {}
    for key, text in raw_reasons.items():
        number = _nugget_key(key)
        if number not in shown_set:
            raise ReplyParseError(UNKNOWN_NUGGET.format(
                field="nugget_reasons", number=number, shown=shown_text))
        if not isinstance(text, str):
            raise ReplyParseError(WRONG_TYPE.format(
                field=f"nugget_reasons.{key}", expected="a string", found=_kind(text)))
        nugget_reasons[number] = text
    missing = sorted(shown_set - nugget_reasons.keys())
    if missing:
        raise ReplyParseError(MISSING_NUGGET_REASON.format(number=missing[0]))

    raw_relevant = _typed(reply, "relevant", list, "an array")
    relevant: set[int] = set()
    for item in raw_relevant:
        if isinstance(item, bool) or not isinstance(item, int):
            raise ReplyParseError(NOT_A_NUGGET_NUMBER.format(field="relevant", found=item))
        if item not in shown_set:
            raise ReplyParseError(UNKNOWN_NUGGET.format(
                field="relevant", number=item, shown=shown_text))
        relevant.add(item)

    return AnswerLabel(
        correct=correct,
        reason=reason,
        # A nugget is relevant only to a correct answer (see the module docstring).
        relevant=tuple(sorted(relevant)) if correct else (),
        nugget_reasons=dict(sorted(nugget_reasons.items())),
    )


def _load_object(raw: str, fields: tuple[str, ...]) -> dict[str, Any]:
    try:
        reply = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as error:
        raise ReplyParseError(NOT_JSON.format(error=error)) from None
    if not isinstance(reply, dict):
        raise ReplyParseError(NOT_AN_OBJECT.format(found=_kind(reply)))
    for field in fields:
        if field not in reply:
            raise ReplyParseError(MISSING_FIELD.format(field=field))
    for field in reply:
        if field not in fields:
            raise ReplyParseError(UNEXPECTED_FIELD.format(field=field))
    return reply


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ReplyParseError(DUPLICATE_FIELD.format(field=key))
        result[key] = value
    return result


def _typed(reply: dict[str, Any], field: str, kind: type[Any], expected: str) -> Any:
    value = reply[field]
    # bool is a subclass of int; neither may stand in for the other here.
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ReplyParseError(WRONG_TYPE.format(field=field, expected=expected,
                                                found=_kind(value)))
    return value


def _nugget_key(key: str) -> int:
    # Only canonical decimal keys ("3", not "03", " 3" or "+3") name a nugget.
    if not key.isascii() or not key.isdigit() or str(int(key)) != key:
        raise ReplyParseError(NOT_A_NUGGET_NUMBER.format(field="nugget_reasons", found=key))
    return int(key)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number"}
    label = names.get(type(value), type(value).__name__)
    if isinstance(value, dict | list):
        return label
    shown = json.dumps(value)
    return f"{label} {shown}" if len(shown) <= 40 else label
