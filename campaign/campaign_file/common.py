"""What every part of the campaign-file reader shares: the messages and the problem
collector."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

# --- messages (tests match them exactly) -------------------------------------
NO_SUCH_FILE = "{file}: no such file"
NOT_UTF8 = "{file}: not UTF-8 text ({problem})"
YAML_SYNTAX = "{file}: line {line}: not valid YAML ({problem})"
NOT_A_MAPPING = "{file}: expected a mapping of campaign settings, found {found}"
UNKNOWN_KEY = "{file}: unknown key '{key}' (expected one of: {expected})"
MISSING_KEY = "{file}: missing required key '{key}'"
WRONG_TYPE = "{file}: {key}: expected {expected}, found {found}"
BAD_SLUG = "{file}: {key}: '{value}' is not a slug (expected letters, digits, '-' or '_')"
BAD_TIMEZONE = "{file}: timezone: '{value}' is not an IANA time zone (expected e.g. Asia/Tokyo)"
BAD_DATE = (
    "{file}: {key}: '{value}' is not an ISO 8601 date-time with a UTC offset "
    "(expected e.g. 2026-03-13T00:00:00+09:00)"
)
PHASE_ORDER = "{file}: phases: {later} ({b}) is before {earlier} ({a})"
BAD_URL = "{file}: {key}: '{value}' is not an http(s) URL (expected e.g. http://vllm:8000/v1)"
BAD_CHOICE = "{file}: {key}: '{value}' is not allowed (expected one of: {expected})"
BAD_COUNT = "{file}: {key}: expected a whole number of at least 1, found {value!r}"
BAD_PROBABILITY = "{file}: {key}: expected a number from 0 to 1, found {value!r}"
DUPLICATE_TRACK = "{file}: tracks: duplicate track slug '{slug}'"
MISSING_DATA_FILE = "{file}: {key}: file '{path}' not found (paths are relative to {base})"
LINE_MALFORMED = "{path}: line {line}: expected '{expected}', found '{found}'"
LINE_BAD_QID = "{path}: line {line}: qID '{qid}' must be 1-64 characters without spaces or ';'"
DUPLICATE_QID = "{path}: line {line}: duplicate qID '{qid}' (first on line {first})"
UNKNOWN_QID = "{path}: line {line}: qID '{qid}' is not in {questions}"
NO_QUESTIONS = "{path}: no questions (expected '[qID];[Question]' lines)"
BAD_USERNAME = "{file}: {key}: '{value}' is not a username (expected letters, digits and @.+-_)"
BAD_TEAM_NAME = (
    "{file}: {key}: '{value}' is not a team name "
    "(expected letters, digits, '_' and '-', starting with a letter or digit, at most 64)"
)
DUPLICATE_TEAM = "{file}: teams: duplicate team name '{name}'"
USER_IN_TWO_TEAMS = "{file}: teams: user '{user}' is in both {first} and {second}"
ORGANISER_IN_TEAM = "{file}: teams: user '{user}' is an organiser and cannot be in team {team}"

SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]{1,64}$")
QID_RE = re.compile(r"^[^\s;]{1,64}$")
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")
# Run names start with the team's name: [Team]-AC-1, so no spaces, ';', ':' or '/'.
TEAM_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class CampaignFileError(Exception):
    """The file cannot be loaded; `problems` lists every reason, one message each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


@dataclass
class _Reader:
    """Collects problems while walking one campaign file."""

    file: Path
    problems: list[str] = field(default_factory=list)

    def add(self, template: str, **values: Any) -> None:
        self.problems.append(template.format(file=self.file, **values))

    def check_keys(self, mapping: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in mapping:
            if key not in allowed:
                self.add(UNKNOWN_KEY, key=f"{where}{key}", expected=", ".join(allowed))

    def text(self, mapping: dict[str, Any], key: str, where: str = "") -> str | None:
        value = mapping.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.add(WRONG_TYPE, key=f"{where}{key}", expected="text", found=_type_name(value))
            return None
        return value

    def date(self, value: Any, key: str) -> datetime | None:
        try:
            parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            self.add(BAD_DATE, key=key, value=value)
            return None
        return parsed

    def data_lines(self, key: str, value: Any) -> tuple[Path, list[tuple[int, str]]] | None:
        """Read a `[qID];[text]` file named by `key`, relative to the YAML file."""
        if not isinstance(value, str):
            self.add(WRONG_TYPE, key=key, expected="a file path", found=_type_name(value))
            return None
        path = (self.file.parent / value).resolve()
        if not path.is_file():
            self.add(MISSING_DATA_FILE, key=key, path=value, base=self.file.parent)
            return None
        try:
            content = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            self.problems.append(NOT_UTF8.format(file=path, problem=exc.reason))
            return None
        return path, [(n, line) for n, line in enumerate(content.splitlines(), 1) if line.strip()]

