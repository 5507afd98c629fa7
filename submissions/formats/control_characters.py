"""Control characters (Unicode Cc, tab aside) in uploaded text, found and named by line,
field and column, for every format and free-text field (docs/formats.md, "Limits")."""

from __future__ import annotations

import re
from collections.abc import Sequence

try:
    import numpy as np
except ImportError:  # the participants' client (client/) ships this package without numpy
    np = None  # type: ignore[assignment]

from .common import Problem

CONTROL_CHARACTER = "found the control character U+{:04X} at column {}; expected {}"
CONTROL_CHARACTER_IN_VALUE = (
    "found the control character U+{:04X} at character {} of the {}; expected {}"
)

#: What each message says is expected, by what the value may hold.
NO_CONTROLS_BUT_TAB = "no control characters other than tab"
NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS = "no control characters other than tab and line breaks"
NO_CONTROLS = "no control characters"

_CONTROLS_BUT_TAB = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROLS_BUT_TAB_AND_CR = re.compile("[\x00-\x08\x0a-\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROLS_BUT_TAB_AND_LINE_BREAKS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
# The same in UTF-8 bytes, tab and both line-break bytes aside: C0, DEL, and C1, which
# UTF-8 writes 0xC2 0x80..0x9F (0xC2 only ever starts a character, so no other character's
# bytes match).
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]")
_C1_BYTES = re.compile(rb"\xc2[\x80-\x9f]")
_VISIBLE = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}


def line_control_problem(line: str, lineno: int, field: str) -> Problem | None:
    """The first control character of a whole line (tab allowed), as a `Problem` with its
    1-based column."""
    found = _CONTROLS_BUT_TAB.search(line)
    if found is None:
        return None
    return Problem(
        lineno,
        field,
        CONTROL_CHARACTER.format(ord(found.group()), found.start() + 1, NO_CONTROLS_BUT_TAB),
    )


def separated_line_control_problem(
    line: str,
    lineno: int,
    fields: Sequence[str],
    *,
    separator: str = ";",
    rest_first: bool = False,
    carriage_return: bool = False,
) -> Problem | None:
    """The first control character (tab allowed) of a `separator`-separated line, as a
    `Problem` naming its field; the last field takes the rest, or the first with `rest_first`.
    `carriage_return` lets a ``\\r`` pass for a caller that reports it on its own."""
    pattern = _CONTROLS_BUT_TAB_AND_CR if carriage_return else _CONTROLS_BUT_TAB
    found = pattern.search(line)
    if found is None:
        return None
    column = found.start()
    if rest_first:
        after = line.count(separator, column)
        field = fields[max(len(fields) - 1 - after, 0)]
    else:
        field = fields[min(line.count(separator, 0, column), len(fields) - 1)]
    return Problem(
        lineno,
        field,
        CONTROL_CHARACTER.format(ord(found.group()), column + 1, NO_CONTROLS_BUT_TAB),
    )


def value_control_problem(
    value: str, lineno: int, field: str, *, line_breaks: bool
) -> Problem | None:
    """The first control character of a JSON string value, as a `Problem`; tab and line
    breaks are allowed only where `line_breaks` (a text, not an id, which TREC lines split)."""
    pattern = _CONTROLS_BUT_TAB_AND_LINE_BREAKS if line_breaks else _CONTROLS
    found = pattern.search(value)
    if found is None:
        return None
    expected = NO_CONTROLS_BUT_TAB_AND_LINE_BREAKS if line_breaks else NO_CONTROLS
    return Problem(
        lineno,
        field,
        CONTROL_CHARACTER_IN_VALUE.format(ord(found.group()), found.start() + 1, field, expected),
    )


def may_hold_control_bytes(data: bytes) -> bool:
    """A fast screen of a block of UTF-8 bytes for `pr_run`: False if no line can hold a
    control character but tab and line breaks; True sends the lines to `has_control_bytes`."""
    spaced = data.replace(b"\n", b" ")
    if spaced and _lowest_byte(spaced) < 0x20:
        # Tab and \r are no controls here: look again without them (rarely needed).
        spaced = spaced.replace(b"\t", b" ").replace(b"\r", b" ")
        if _lowest_byte(spaced) < 0x20:
            return True
    return b"\x7f" in data or (not data.isascii() and _C1_BYTES.search(data) is not None)


def _lowest_byte(data: bytes) -> int:
    if np is None:  # the client: a file checked once before its upload, slower is fine
        return min(data)
    return int(np.frombuffer(data, np.uint8).min())


def has_control_bytes(line: bytes) -> bool:
    """True if the UTF-8 bytes `line` hold a control character but tab and line breaks."""
    return _CONTROL_BYTES.search(line) is not None


def visible(text: str) -> str:
    """`text` with each control character escaped (``\\x00``), for a message that is stored
    and shown on a page."""
    return text.translate(_VISIBLE)
