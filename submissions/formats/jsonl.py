"""What the JSON Lines formats share (response runs, corpus, test bank): a JSON object per
line, each line checked and reported on its own, naming the key (``items[2].question_text``)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from .common import (
    BLANK_LINE,
    EMPTY_FIELD,
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    BinaryReader,
    Problem,
    excerpt,
    is_blank,
    iter_text_lines,
)
from .control_characters import line_control_problem, value_control_problem

INVALID_JSON = "found text that is not JSON ({} at column {}); expected {}"
NOT_AN_OBJECT = "found {}; expected {}"
DUPLICATE_KEY = "found the key {!r} twice in one object; expected each key once"
MISSING_KEY = "found no {!r} key; expected {}"
WRONG_TYPE = "found {} for {!r}; expected {}"
UNKNOWN_KEY = "found the key {!r}; expected only the keys {}"
#: What INVALID_JSON says of JSON that Python will not read.
TOO_LONG = "a number too long to read"
TOO_DEEP = "lists or objects nested too deeply to read"
LONE_SURROGATE = (
    "found the lone surrogate \\u{:04x} at character {} of the {}; expected valid Unicode text"
)

#: What a value of each JSON type is called in a message ("found a number for 'qid'").
EXPECTED_STRING = "a string"
EXPECTED_LIST_OF_STRINGS = "a list of strings"
EXPECTED_OBJECT = "an object"
EXPECTED_LIST_OF_OBJECTS = "a list of objects"

JsonObject = dict[str, Any]

# JSON can escape half of a UTF-16 pair ("\ud800") that no UTF-8 text can hold: such a
# value would fail later, when it is stored, instead of here with its line.
_SURROGATE = re.compile("[\ud800-\udfff]")


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_without_duplicate_keys(pairs: list[tuple[str, Any]]) -> JsonObject:
    # json.loads keeps the last of two equal keys without a word; a file that says
    # "text" twice is ambiguous, so it is a problem rather than a silent choice.
    obj: JsonObject = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKeyError(key)
        obj[key] = value
    return obj


def json_kind(value: object) -> str:
    """What a JSON value is, in a message: ``a string``, ``a number``, ``null``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return "an object"


def iter_json_objects(
    binary_file: BinaryReader, problems: list[Problem], *, example: str, what: str
) -> Iterator[tuple[int, JsonObject]]:
    """Yield ``(lineno, object)`` per line that holds one JSON object; every other line is
    reported and skipped. `example` is the line the messages expect, `what` names a line."""
    expected = f"one JSON object per line, such as {example}"
    lineno = 0
    for lineno, line in iter_text_lines(binary_file, problems):
        if line is None:
            continue
        if is_blank(line):
            problems.append(Problem(lineno, FIELD_LINE, BLANK_LINE.format(expected)))
            continue
        control = line_control_problem(line, lineno, FIELD_LINE)
        if control is not None:
            problems.append(control)
            continue
        try:
            value = json.loads(line, object_pairs_hook=_object_without_duplicate_keys)
        except _DuplicateKeyError as error:
            problems.append(Problem(lineno, FIELD_LINE, DUPLICATE_KEY.format(excerpt(error.key))))
            continue
        except json.JSONDecodeError as error:
            problems.append(
                Problem(lineno, FIELD_LINE, INVALID_JSON.format(error.msg, error.colno, expected))
            )
            continue
        except ValueError:  # an integer past Python's limit of 4300 digits
            problems.append(Problem(lineno, FIELD_LINE, INVALID_JSON.format(TOO_LONG, 1, expected)))
            continue
        except RecursionError:  # lists or objects nested thousands deep
            problems.append(Problem(lineno, FIELD_LINE, INVALID_JSON.format(TOO_DEEP, 1, expected)))
            continue
        if not isinstance(value, dict):
            problems.append(
                Problem(lineno, FIELD_LINE, NOT_AN_OBJECT.format(json_kind(value), expected))
            )
            continue
        yield lineno, value
    if lineno == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format(what)))


def unknown_keys(
    obj: Mapping[str, object],
    allowed: Collection[str],
    lineno: int,
    problems: list[Problem],
    *,
    path: str = "",
) -> None:
    """Report each key of `obj` that is not `allowed` (a misspelt key is not ignored)."""
    listed = ", ".join(repr(key) for key in allowed)
    for key in obj:
        if key not in allowed:
            problems.append(
                Problem(lineno, path + excerpt(key), UNKNOWN_KEY.format(excerpt(key), listed))
            )


def string_value(
    obj: Mapping[str, object],
    key: str,
    lineno: int,
    problems: list[Problem],
    *,
    path: str = "",
    line_breaks: bool = False,
) -> str | None:
    """The non-blank string at `key`, or None once its problem is reported; `path` prefixes
    the field's name, `line_breaks` lets a text (not an id) hold line breaks and tabs."""
    field = path + key
    if key not in obj:
        problems.append(Problem(lineno, field, MISSING_KEY.format(key, EXPECTED_STRING)))
        return None
    return checked_string(obj[key], field, lineno, problems, line_breaks=line_breaks)


def checked_string(
    value: object, field: str, lineno: int, problems: list[Problem], *, line_breaks: bool
) -> str | None:
    """`value` if it is a non-blank string without control characters, else None."""
    if not isinstance(value, str):
        problems.append(
            Problem(lineno, field, WRONG_TYPE.format(json_kind(value), field, EXPECTED_STRING))
        )
        return None
    if not value.strip():  # any white space, as the segmenter's words are split on
        problems.append(Problem(lineno, field, EMPTY_FIELD.format(field)))
        return None
    control = value_control_problem(value, lineno, field, line_breaks=line_breaks)
    if control is not None:
        problems.append(control)
        return None
    surrogate = _SURROGATE.search(value)
    if surrogate is not None:
        problems.append(
            Problem(
                lineno,
                field,
                LONE_SURROGATE.format(ord(surrogate.group()), surrogate.start() + 1, field),
            )
        )
        return None
    return value


def string_list_value(
    value: object, field: str, lineno: int, problems: list[Problem], *, line_breaks: bool
) -> tuple[str, ...] | None:
    """`value` as a tuple of non-blank strings, or None once every bad element (``field[i]``,
    0-based) is reported."""
    if not isinstance(value, list):
        problems.append(
            Problem(
                lineno, field, WRONG_TYPE.format(json_kind(value), field, EXPECTED_LIST_OF_STRINGS)
            )
        )
        return None
    before = len(problems)
    strings = [
        checked_string(element, f"{field}[{index}]", lineno, problems, line_breaks=line_breaks)
        for index, element in enumerate(value)
    ]
    if len(problems) != before:
        return None
    return tuple(string for string in strings if string is not None)


def dump_line(obj: Mapping[str, object]) -> str:
    """One JSONL line as the Autograding Workbench writes them (`json.dumps`' defaults,
    ASCII escapes, keys in the order given), so the same object gives the same bytes."""
    return json.dumps(obj) + "\n"
