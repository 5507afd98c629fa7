"""Control characters (docs/formats.md): found, named by field and column, screened fast."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from submissions.formats.common import Problem
from submissions.formats.control_characters import (
    CONTROL_CHARACTER,
    NO_CONTROLS_BUT_TAB,
    has_control_bytes,
    may_hold_control_bytes,
    separated_line_control_problem,
    visible,
)

#: Every control character a line may not hold: Unicode category Cc but tab and the two
#: line-break characters (which end lines before any check sees them).
CONTROLS = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\t\n\r"]
PR_FIELDS = ("qID", "PassageRank", "docID", "PassageText")
# The reference the fast screens must agree with: a plain search, one character at a time.
REFERENCE = re.compile("[" + "".join(re.escape(c) for c in CONTROLS) + "]")


def problem(field: str, code: int, column: int) -> Problem:
    return Problem(7, field, CONTROL_CHARACTER.format(code, column, NO_CONTROLS_BUT_TAB))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("D001;1;d;text", None),
        ("D001;1;d;\ttabbed\t", None),
        ("\x00D001;1;d;t", problem("qID", 0, 1)),
        ("D001;1\x01;d;t", problem("PassageRank", 1, 7)),
        ("D001;1;d\x7f;t", problem("docID", 0x7F, 9)),
        # The last field takes the rest of the line, separators and all.
        ("D001;1;d;a;b;c\x9f", problem("PassageText", 0x9F, 15)),
        # The first control character is the one named.
        ("D001;1;d\x02;t\x00", problem("docID", 2, 9)),
    ],
)
def test_it_names_the_field_that_holds_the_first_control_character(
    line: str, expected: Problem | None
) -> None:
    assert separated_line_control_problem(line, 7, PR_FIELDS) == expected


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("Buzz\x00;Aldrin;85", "Answer"),
        ("Buzz;Aldrin\x00;85", "Answer"),
        ("Buzz;8\x005", "Confidence"),
    ],
)
def test_with_rest_first_the_first_field_takes_the_rest_of_the_line(line: str, field: str) -> None:
    found = separated_line_control_problem(line, 7, ("Answer", "Confidence"), rest_first=True)
    assert found is not None and found.field == field


def test_a_carriage_return_is_left_to_its_own_message_when_asked() -> None:
    assert separated_line_control_problem("a;b\rc", 1, ("x", "y")) is not None
    assert separated_line_control_problem("a;b\rc", 1, ("x", "y"), carriage_return=True) is None


@pytest.mark.parametrize("character", CONTROLS, ids=[f"U+{ord(c):04X}" for c in CONTROLS])
def test_the_byte_screens_see_every_control_character(character: str) -> None:
    data = ("D001;1;d;a passage with é and\n" * 50 + f"D001;1;d;x{character}y\n").encode()
    assert may_hold_control_bytes(data)
    assert has_control_bytes(f"x{character}y".encode())


@pytest.mark.parametrize(
    "text", ["plain ASCII\n" * 100, "tab\tand\r\nCRLF\n", "é ü \u2013 € 中文 \u00a0 \u0160\n", ""]
)
def test_the_byte_screens_pass_text_without_control_characters(text: str) -> None:
    data = text.encode()
    assert not may_hold_control_bytes(data)
    assert not has_control_bytes(data)


@given(st.text(st.characters(codec="utf-8"), max_size=200))
def test_the_byte_screens_agree_with_a_plain_search(text: str) -> None:
    data = text.encode()
    found = REFERENCE.search(text) is not None
    assert has_control_bytes(data) is found
    if found:  # a screen may pass a block on to the line checks, but never miss one
        assert may_hold_control_bytes(data)
    else:
        assert not may_hold_control_bytes(data)


def test_visible_writes_control_characters_as_escapes() -> None:
    assert visible("D0\x0001 \x1b[31m\x85 é") == "D0\\x0001 \\x1b[31m\\x85 é"
