"""The mappings and lists of a campaign file as DRF serializers that read every key even after
a problem and keep what they could read, so the checks across keys run too: every problem
of the file is reported at once, in the order of its keys."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.fields import SkipField, empty

from campaign.campaign_file.fields import Value
from campaign.campaign_file.problems import SECTION, UNKNOWN, WRONG_TYPE, Refused, type_name


class Section(serializers.Serializer[Any]):
    """A mapping: a key it does not know is a problem, `check` runs across the keys on what
    could be read, and `make` turns the values into what the section stands for."""

    expected = "a mapping"
    #: The keys it knows, when they are not exactly its fields.
    known_keys: tuple[str, ...] = ()

    def run_validation(self, data: Any = empty) -> Any:
        # DRF's own turns a `Refused` into a plain error, losing what could be read.
        is_empty, value = self.validate_empty_values(empty if data is None else data)
        return value if is_empty else self.to_internal_value(data)

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise Refused(WRONG_TYPE.format(expected=self.expected, found=type_name(data)))
        known = self.known_keys or tuple(self.fields)
        errors: dict[Any, Any] = {str(key): [ErrorDetail(", ".join(known), code=UNKNOWN)]
                                  for key in data if key not in known}
        values: dict[str, Any] = {}
        for name, field in self.fields.items():
            try:
                values[name] = field.run_validation(field.get_value(data))
            except SkipField:
                continue
            except ValidationError as exc:
                errors[name] = exc.detail
                if isinstance(exc, Refused) and exc.partial is not None:
                    values[name] = exc.partial
        for key, told in self.check(values).items():
            if told:
                have = errors.setdefault(key, [])
                (have.setdefault(SECTION, []) if isinstance(have, dict) else have).extend(told)
        made = self.make(values)
        if errors:
            rank = {name: index for index, name in enumerate([*self.fields, SECTION])}
            raise Refused(dict(sorted(errors.items(), key=lambda item: rank.get(item[0], -1))),
                          partial=made)
        return made

    def check(self, values: dict[str, Any]) -> dict[str | None, list[Any]]:
        """Problems across keys, by the key they are told at (`SECTION`: the section's own)."""
        return {}

    def make(self, values: dict[str, Any]) -> Any:
        """What the section stands for, or None when `values` lack what it needs."""
        return values


class Items(Value):
    """A list, each item read by `child` on its own; an item that could not be read is None
    in what the checks see, so the others keep their index."""

    def __init__(self, *, child: Section, expected: str, allow_empty: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.child, self.expected, self.allow_empty = child, expected, allow_empty
        self.adopt(child)

    def adopt(self, child: Section) -> None:
        """Bind `child` to this list, as DRF's ListField binds its own (for the context)."""
        child.bind(field_name="", parent=self)  # type: ignore[arg-type]

    def to_internal_value(self, data: Any) -> tuple[Any, ...]:
        if not isinstance(data, list) or not (data or self.allow_empty):
            raise self.wrong_type(data)
        errors: dict[Any, Any] = {}
        items: list[Any] = []
        for index, item in enumerate(data):
            try:
                items.append(self.child_for(item).to_internal_value(item))
            except ValidationError as exc:
                errors[index] = exc.detail
                items.append(exc.partial if isinstance(exc, Refused) else None)
        told = self.check([item for item in items if item is not None])
        if told:
            errors[SECTION] = told
        if errors:
            raise Refused(errors, partial=tuple(items))
        return tuple(items)

    def child_for(self, item: Any) -> Section:
        """The section that reads `item` (a track is read by its kind's)."""
        return self.child

    def check(self, items: list[Any]) -> list[str]:
        """Problems across the items, told at the list's key."""
        return []
