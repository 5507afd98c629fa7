"""Control characters in uploaded text: found, named by line and column, refused.

NUL and other control characters (tab aside) are refused with their line and column
(docs/formats.md). Every format follows the rule: the R2C2 runs (`pr_run`, `ac_run`,
`marked_ac_run`), the RUBRIC formats (TREC runs, response runs, corpus, test bank) and,
through `config.text_fields`, every free-text field of the API and the pages. A control
character is one of Unicode category Cc: C0 (U+0000..U+001F), DEL (U+007F) and C1
(U+0080..U+009F). The line break ends a line, so only a JSON value can hold one (escaped);
passage and response texts may, ids may not.

Why refuse rather than strip: PostgreSQL cannot store NUL in a text column at all (an
upload that reached the database with one ended in a 500), and the other controls are
invisible on a page yet change what a judge reads; the participant should know.

Pure: no Django imports.
"""

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
    """The first control character of a whole line (tab allowed), as a `Problem`.

    The column is 1-based, in characters.
    """
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
    """The first control character of a line of `separator`-separated `fields` (tab
    allowed), as a `Problem` named by the field that holds it.

    The fields are split as the R2C2 formats split them: the last takes the rest of the
    line, or with `rest_first` the first does (an AC answer line, whose confidence follows
    the last ``;``). `carriage_return`: let a ``\\r`` pass, for a caller that reports it
    as a carriage return inside the line. The column is 1-based, in characters.
    """
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
    """The first control character of a JSON string value, as a `Problem`.

    `line_breaks`: whether the value may hold ``\\n`` and ``\\r`` (a text may, an id may
    not). Tab is allowed only where line breaks are: an id with a tab would split a TREC
    run or qrels line, which separate fields with white space.
    """
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
    """False if the UTF-8 bytes `data` hold no control character but tab and line breaks.

    A screen for a block of lines read as bytes (`pr_run`'s fast path): True means one of
    them may hold one, to be found line by line with `has_control_bytes`. It costs a few
    passes at memory speed (a copy, numpy's minimum, ``memchr``): a regular expression over
    every byte would cost more than the rest of the validation put together.
    """
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
    """`text` with each control character written as an escape (``\\x00``), for a message.

    Messages are stored (a run's validation report) and shown on pages; PostgreSQL cannot
    store NUL even in JSON, and the others would be invisible.
    """
    return text.translate(_VISIBLE)
