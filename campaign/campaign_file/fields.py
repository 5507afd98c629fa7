"""The values of a campaign file as DRF fields, stricter than YAML: text must be text and a
number a number, and each problem says what was found and what was expected."""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty

from campaign.campaign_file.problems import WRONG_TYPE, Refused, type_name

# --- messages (tests match them exactly), each told after its file and key ---
BAD_SLUG = "'{value}' is not a slug (expected letters, digits, '-' or '_')"
BAD_TIMEZONE = "'{value}' is not an IANA time zone (expected e.g. Asia/Tokyo)"
BAD_DATE = (
    "'{value}' is not an ISO 8601 date-time with a UTC offset "
    "(expected e.g. 2026-03-13T00:00:00+09:00)"
)
BAD_URL = "'{value}' is not an http(s) URL (expected e.g. http://vllm:8000/v1)"
BAD_CHOICE = "'{value}' is not allowed (expected one of: {expected})"
BAD_COUNT = "expected a whole number of at least {low}, found {value!r}"
BAD_RANGE = "expected a whole number from {low} to {high}, found {value!r}"
BAD_PROBABILITY = "expected a number from 0 to 1, found {value!r}"
BAD_USERNAME = "'{value}' is not a username (expected letters, digits and @.+-_)"
MISSING_DATA_FILE = "file '{path}' not found (paths are relative to {base})"

SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]{1,64}$")
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")


class Value(serializers.Field[Any, Any, Any, Any]):
    """A key's value: a null one counts as missing unless `null_is_missing` is False (then it is
    checked, and refused, like any other)."""

    expected = "a value"

    def __init__(self, *, null_is_missing: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.null_is_missing = null_is_missing

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data is None:
            if not self.null_is_missing:
                return False, None
            data = empty
        return super().validate_empty_values(data)

    def wrong_type(self, data: Any) -> ValidationError:
        return ValidationError(WRONG_TYPE.format(expected=self.expected, found=type_name(data)))


class Text(Value):
    """A string; with `allow_blank` False an empty one counts as missing."""

    expected = "text"

    def __init__(self, *, allow_blank: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.allow_blank = allow_blank

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        return super().validate_empty_values(empty if data == "" and not self.allow_blank
                                             else data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            raise self.wrong_type(data)
        return data


class Matching(Text):
    """Text that matches `pattern`: a slug, a team name."""

    def __init__(self, pattern: re.Pattern[str], problem: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pattern, self.problem = pattern, problem

    def to_internal_value(self, data: Any) -> str:
        text = super().to_internal_value(data)
        if not self.pattern.match(text):
            raise ValidationError(self.problem.format(value=text))
        return text


class TimeZone(Text):
    """An IANA zone name: where the pages show the campaign's times."""

    def to_internal_value(self, data: Any) -> str:
        text = super().to_internal_value(data)
        if text not in zoneinfo.available_timezones():
            raise ValidationError(BAD_TIMEZONE.format(value=text))
        return text


class Url(Text):
    """An http(s) URL, such as a judge's OpenAI-compatible endpoint."""

    def to_internal_value(self, data: Any) -> str:
        text = super().to_internal_value(data)
        if not text.startswith(("http://", "https://")):
            raise ValidationError(BAD_URL.format(value=text))
        return text


class Choice(Value):
    """One of `choices`; with `text_first` a value that is not text is told so first."""

    expected = "text"

    def __init__(self, choices: Sequence[str], *, text_first: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices, self.text_first = tuple(choices), text_first

    def to_internal_value(self, data: Any) -> str:
        if self.text_first and not isinstance(data, str):
            raise self.wrong_type(data)
        if data not in self.choices:
            raise ValidationError(BAD_CHOICE.format(value=data, expected=", ".join(self.choices)))
        return str(data)


class Timestamp(Value):
    """An ISO 8601 date-time with its UTC offset: a deadline is never in an unknown zone."""

    def to_internal_value(self, data: Any) -> datetime:
        try:
            parsed = datetime.fromisoformat(data) if isinstance(data, str) else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            raise ValidationError(BAD_DATE.format(value=data))
        return parsed


class WholeNumber(Value):
    """An int (not a bool) from `low` to `high`, or at least `low` when there is no `high`."""

    def __init__(self, low: int = 1, high: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.low, self.high = low, high

    def to_internal_value(self, data: Any) -> int:
        if (isinstance(data, bool) or not isinstance(data, int) or data < self.low
                or (self.high is not None and data > self.high)):
            problem = BAD_COUNT if self.high is None else BAD_RANGE
            raise ValidationError(problem.format(low=self.low, high=self.high, value=data))
        return data


class Probability(Value):
    """A number from 0 to 1 (true/false is no number, though YAML reads it as one)."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float) or not 0 <= data <= 1:
            raise ValidationError(BAD_PROBABILITY.format(value=data))
        return float(data)


class Usernames(Value):
    """A list of usernames, each once; a user the file names is created if need be."""

    expected = "a list of usernames"

    def to_internal_value(self, data: Any) -> tuple[str, ...]:
        if not isinstance(data, list):
            raise self.wrong_type(data)
        good = [isinstance(name, str) and USERNAME_RE.match(name) is not None for name in data]
        names = tuple(dict.fromkeys(name for name, ok in zip(data, good, strict=True) if ok))
        bad = [BAD_USERNAME.format(value=name) for name, ok in zip(data, good, strict=True)
               if not ok]
        if bad:
            raise Refused(bad, partial=names)
        return names


class DataFile(Value):
    """A file the campaign file names, relative to the campaign file (`context["file"]`)."""

    expected = "a file path"

    def to_internal_value(self, data: Any) -> Path:
        if not isinstance(data, str):
            raise self.wrong_type(data)
        base = self.context["file"].parent
        path: Path = (base / data).resolve()
        if not path.is_file():
            raise ValidationError(MISSING_DATA_FILE.format(path=data, base=base))
        return path


class NotHere(Value):
    """A key that is wrong where it stands (a ranking track's setting on a PR track)."""

    def __init__(self, problem: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problem = problem

    def to_internal_value(self, data: Any) -> Any:
        raise ValidationError(self.problem)
