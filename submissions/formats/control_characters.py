"""Control characters in uploaded text: found, named by line and column, refused.

DESIGN.md section 4: "NUL and other control characters (tab aside) are refused with the
line and column". The RUBRIC formats (TREC runs and the JSONL files of DESIGN.md section
10) follow the same rule. A control character is one of Unicode category Cc: C0
(U+0000..U+001F), DEL (U+007F) and C1 (U+0080..U+009F). The line break ends a line, so
only a JSON value can hold one (escaped); passage and response texts may, ids may not.

Pure: no Django imports.
"""

from __future__ import annotations

import re

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
_CONTROLS_BUT_TAB_AND_LINE_BREAKS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


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
