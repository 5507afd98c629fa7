"""Strict parsing of judge replies: one that is not exactly what its schema describes
raises `ReplyParseError`, retried and finally flagged for review (docs/judging.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

NOT_JSON = "reply is not valid JSON: {error}"
NOT_AN_OBJECT = "reply must be a JSON object, found {found}"
DUPLICATE_FIELD = "reply repeats the field {field!r}"
MISSING_FIELD = "reply lacks the field {field!r}"
UNEXPECTED_FIELD = "reply has an unexpected field {field!r}"
WRONG_TYPE = "field {field!r} must be {expected}, found {found}"


class ReplyParseError(ValueError):
    """The judge's reply is not a valid label; the message says why."""


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
