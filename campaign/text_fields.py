"""Free text sent through the API (`CleanTextField`) and the pages (`CleanTextFormField`),
held to the rule of the run files: no control characters, at most its cap, read from the
settings at each check (docs/formats.md, "Limits")."""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import MaxLengthValidator
from rest_framework import serializers

from submissions.formats.control_characters import value_control_problem
from submissions.formats.limits import TOO_LONG

#: The caps (names of settings) a field may be held to; passages come in files only.
ANSWER = "MAX_ANSWER_CHARS"
NOTE = "MAX_NOTE_CHARS"


def text_problem(value: str, *, what: str, line_breaks: bool, cap: str | None) -> str | None:
    """What is wrong with the free text `value` of field `what`, or None; `line_breaks` lets
    it hold line breaks and tabs, `cap` names the setting of its most characters."""
    if cap is not None:
        most: int = getattr(settings, cap)
        if len(value) > most:
            return TOO_LONG.format(len(value), what, most)
    problem = value_control_problem(value, 0, what, line_breaks=line_breaks)
    return None if problem is None else problem.message


class CleanTextField(serializers.CharField):
    """A `CharField` that refuses control characters and, with `cap`, overlong text, checked on
    the value as sent, before white space is trimmed."""

    def __init__(self, *, cap: str | None = None, line_breaks: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.cap = cap
        self.line_breaks = line_breaks
        if cap is not None:
            # For the OpenAPI document (maxLength, read through the callable): the check
            # in `to_internal_value` comes first, with the same setting, and words it.
            self.validators.append(MaxLengthValidator(partial(getattr, settings, cap)))

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, str):
            problem = text_problem(data, what=self._what(), line_breaks=self.line_breaks,
                                   cap=self.cap)
            if problem is not None:
                raise serializers.ValidationError(problem, code="invalid_text")
        return super().to_internal_value(data)

    def _what(self) -> str:
        # A list's items (`ListField(child=...)`) have no name of their own.
        name = self.field_name or getattr(self.parent, "field_name", "") or "value"
        return str(name)


class CleanTextFormField(forms.CharField):
    """A form `CharField` that refuses control characters and, with `cap`, overlong text."""

    def __init__(self, *, cap: str | None = None, line_breaks: bool = True,
                 what: str = "text", **kwargs: Any):
        # Set before the field's own __init__, which asks `widget_attrs` for maxlength.
        self.cap = cap
        self.line_breaks = line_breaks
        self.what = what  # the form shows the message beside the field: a word will do
        super().__init__(**kwargs)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        attrs: dict[str, Any] = super().widget_attrs(widget)
        if self.cap is not None and self.max_length is None and not widget.is_hidden:
            attrs["maxlength"] = str(getattr(settings, self.cap))
        return attrs

    def to_python(self, value: Any) -> str | None:
        if isinstance(value, str) and value not in self.empty_values:
            problem = text_problem(value, what=self.what, line_breaks=self.line_breaks,
                                   cap=self.cap)
            if problem is not None:
                raise forms.ValidationError(problem, code="invalid_text")
        text: str | None = super().to_python(value)
        return text
