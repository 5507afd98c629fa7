"""What the campaign-file reader says: its messages, the errors that carry them, and the one
function that lays a serializer's nested errors out as messages naming file and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rest_framework.exceptions import ErrorDetail, ValidationError

# --- messages (tests match them exactly) -------------------------------------
# Of the file as a whole, before any key is read.
NO_SUCH_FILE = "{file}: no such file"
NOT_UTF8 = "{file}: not UTF-8 text ({problem})"
YAML_SYNTAX = "{file}: line {line}: not valid YAML ({problem})"
# How `problems_in` lays out a key's problem.
AT_KEY = "{file}: {key}: {problem}"
OF_FILE = "{file}: {problem}"
UNKNOWN_KEY = "{file}: unknown key '{key}' (expected one of: {expected})"
MISSING_KEY = "{file}: missing required key '{key}'"
# A key's problem, laid out after the file and the key.
WRONG_TYPE = "expected {expected}, found {found}"

#: The code of an unknown key's error, whose text lists the keys expected there.
UNKNOWN = "unknown_key"
#: The code of a message that names its own file: a line of a data file, a check across keys.
WHOLE = "whole_message"
#: Where a section's own problems are, beside those of its keys (its unknown keys are
#: named as text, so no key of the file is mistaken for it).
SECTION = None


class CampaignFileError(Exception):
    """The file cannot be loaded; `problems` lists every reason, one message each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class Refused(ValidationError):
    """A value's problems, with what of it could still be read (`partial`), so that the checks
    across keys that follow still run: every problem is reported at once."""

    def __init__(self, detail: Any, partial: Any = None) -> None:
        super().__init__(detail)
        self.partial = partial


def whole(messages: list[str]) -> list[ErrorDetail]:
    """Messages that already name their file (and line), to be told as they are."""
    return [ErrorDetail(message, code=WHOLE) for message in messages]


def type_name(value: Any) -> str:
    """What a YAML value is, in the messages' words."""
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def problems_in(detail: Any, file: Path, key: str = "") -> list[str]:
    """The messages of a serializer's errors (dicts by key or list index, lists of
    ErrorDetail), each naming `file` and its key path, e.g. `tracks[2].cover_k`."""
    if isinstance(detail, dict):
        return [problem for name, inner in detail.items()
                for problem in problems_in(inner, file, _key_path(key, name))]
    if isinstance(detail, list):
        return [problem for inner in detail for problem in problems_in(inner, file, key)]
    code = getattr(detail, "code", None)
    if code == "required":
        return [MISSING_KEY.format(file=file, key=key)]
    if code == UNKNOWN:
        return [UNKNOWN_KEY.format(file=file, key=key, expected=detail)]
    if code == WHOLE:
        return [str(detail)]
    return [(AT_KEY if key else OF_FILE).format(file=file, key=key, problem=detail)]


def _key_path(key: str, name: str | int | None) -> str:
    if name is SECTION:
        return key
    if isinstance(name, int):
        return f"{key}[{name}]"
    return f"{key}.{name}" if key else name
