"""Yes/no query parameters (``?edited=true``), read as the settings read them:
1/true/yes/on or 0/false/no/off in any case, empty for "not given", any other word an error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from rest_framework import exceptions

from infrastructure.env import yes_no

BAD_FLAG = "expected true or false, found {value!r}"
ANY_YES_NO = [("", "Any"), ("true", "Yes"), ("false", "No")]


def parse_flag(value: str | None) -> bool | None:
    """True, False, or None when the parameter is absent or empty; ValueError otherwise."""
    if value is None or not value.strip():
        return None
    try:
        return yes_no(value)
    except ValueError:
        raise ValueError(BAD_FLAG.format(value=value)) from None


def query_flag(params: Mapping[str, Any], name: str) -> bool | None:
    """`parse_flag` for an API view: a bad value is a 400 naming the parameter."""
    try:
        return parse_flag(params.get(name))
    except ValueError as bad:
        raise exceptions.ValidationError({name: [str(bad)]}) from None


class FlagField(forms.NullBooleanField):
    """A form field for a yes/no parameter, parsed by `parse_flag`: NullBooleanField's widget
    would read an unknown word as "not given"."""

    widget = forms.Select(choices=ANY_YES_NO)

    def to_python(self, value: Any) -> bool | None:  # type: ignore[override]
        if isinstance(value, bool):
            return value
        try:
            return parse_flag(value)
        except ValueError as bad:
            # As a parameter, not in the message: django-filter formats every message
            # with `%`, and the word sent may hold one (`?label=%` was a 500).
            raise forms.ValidationError("%(problem)s", code="invalid",
                                        params={"problem": str(bad)}) from None


def _ticked(value: Any) -> bool:
    try:
        return value is True or (isinstance(value, str) and parse_flag(value) is True)
    except ValueError:
        return False


class FlagCheckbox(forms.CheckboxInput):
    """A checkbox for a FlagField: the raw value goes to the field, so `?doubtful=0` means
    no and `?doubtful=maybe` is an error (CheckboxInput reads any word but "false" as yes)."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs, check_test=_ticked)

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        return data.get(name)
