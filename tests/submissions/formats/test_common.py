from __future__ import annotations

import pytest

from submissions.formats.common import (
    CARRIAGE_RETURN,
    INVALID_UTF8,
    ParseResult,
    PassageKey,
    Problem,
    check_writable,
    decode_line,
    excerpt,
    is_blank,
    iter_line_blocks,
    iter_raw_lines,
    iter_text_lines,
    parse_int,
    utf8_problem,
)
from tests.submissions.formats.support import TrickleReader, bio, unwritable


def test_a_problem_reads_as_line_field_and_message() -> None:
    assert str(Problem(3, "qID", "found x")) == "line 3, qID: found x"
    assert str(Problem(0, "file", "found an empty file")) == "file: found an empty file"


def test_a_passage_key_is_written_run_colon_rank_and_sorts_by_run_then_rank() -> None:
    keys = [
        PassageKey("WASEDA-PO-1", 10),
        PassageKey("KYOTO-PG-1", 2),
        PassageKey("WASEDA-PO-1", 9),
    ]
    assert str(keys[0]) == "WASEDA-PO-1:10"
    assert sorted(keys) == [keys[1], keys[2], keys[0]]


def test_a_parse_result_is_ok_only_without_problems() -> None:
    assert ParseResult([1], []).ok
    assert not ParseResult([1], [Problem(1, "line", "x")]).ok


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("20", 20),
        ("007", 7),
        ("0", None),
        ("21", None),
        ("", None),
        ("+1", None),
        ("-1", None),
        (" 1", None),
        ("1 ", None),
        ("1_0", None),
        ("1.0", None),
        ("\u0661", None),
        ("\u00b2", None),
        ("0000000001", None),
        ("9" * 5000, None),
    ],
)
def test_it_reads_only_plain_decimal_integers_in_range(text: str, value: int | None) -> None:
    assert parse_int(text, 1, 20) == value


@pytest.mark.parametrize(
    ("text", "blank"),
    [
        ("", True),
        (" ", True),
        ("\t \x0b\x0c", True),
        ("a", False),
        (" a ", False),
        ("\u00a0", False),
        ("\u3000", False),
        ("\x1c", False),
    ],
)
def test_blank_means_empty_or_ascii_white_space_only(text: str, blank: bool) -> None:
    assert is_blank(text) is blank


def test_it_shortens_long_found_values_in_messages() -> None:
    assert excerpt("short") == "short"
    assert excerpt("x" * 100) == "x" * 39 + "\u2026"


@pytest.mark.parametrize(
    ("raw", "bad", "position"),
    [
        (b"ab\xffc", "0xFF", 3),
        (b"a\xe6\x9d", "0xE6 0x9D", 2),
        (b"\xed\xa0\x80", "0xED", 1),
        (b"\xc0\xaf", "0xC0", 1),
    ],
)
def test_it_reports_invalid_utf8_naming_the_bytes_and_where(
    raw: bytes, bad: str, position: int
) -> None:
    problem = Problem(7, "line", INVALID_UTF8.format(bad, position))
    assert decode_line(raw, 7) == problem
    assert utf8_problem(raw, 7) == problem


def test_it_decodes_valid_utf8_lines() -> None:
    assert (
        decode_line("Z\u00fcrich \u2013 \u6771\u4eac".encode(), 1)
        == "Z\u00fcrich \u2013 \u6771\u4eac"
    )
    assert utf8_problem(b"abc", 1) is None


@pytest.mark.parametrize("step", [1, 2, 3, 5, 7, 64, 1 << 16])
def test_it_splits_lines_the_same_however_the_file_is_read(step: int) -> None:
    data = b"\xef\xbb\xbfone\ntwo\r\n\nfour;" + b"x" * 300 + b"\nlast"
    lines = [line for _, line in iter_raw_lines(TrickleReader(data, step), chunk_size=4)]
    assert lines == [b"one", b"two\r", b"", b"four;" + b"x" * 300, b"last"]


def test_it_skips_a_byte_order_mark_only_at_the_start_of_the_file() -> None:
    data = b"\xef\xbb\xbfa\n\xef\xbb\xbfb\n"
    assert list(iter_raw_lines(bio(data))) == [(1, b"a"), (2, b"\xef\xbb\xbfb")]


def test_an_empty_file_has_no_lines_and_a_lone_newline_has_one_empty_line() -> None:
    assert list(iter_raw_lines(bio(b""))) == []
    assert list(iter_raw_lines(bio(b"\n"))) == [(1, b"")]


def test_a_block_covers_exactly_its_whole_lines() -> None:
    blocks = list(iter_line_blocks(bio(b"ab\ncd\nef"), chunk_size=4))
    assert [(block.data[: block.end], block.lines) for block in blocks] == [
        (b"ab\n", [b"ab"]),
        (b"cd\n", [b"cd"]),
        (b"ef", [b"ef"]),
    ]


def test_it_reads_a_huge_line_without_line_breaks_in_pieces() -> None:
    data = b"x" * 5_000_000
    reader = TrickleReader(data, 1000)
    assert list(iter_raw_lines(reader, chunk_size=1000)) == [(1, data)]


def test_text_lines_drop_the_crlf_line_break_and_report_stray_carriage_returns() -> None:
    problems: list[Problem] = []
    data = b"a\r\nb\rc\nd\xff\ne\r"
    lines = list(iter_text_lines(bio(data), problems))
    assert lines == [(1, "a"), (2, None), (3, None), (4, "e")]
    assert problems == [
        Problem(2, "line", CARRIAGE_RETURN),
        Problem(3, "line", INVALID_UTF8.format("0xFF", 2)),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a\nb", unwritable("qID", "a\nb")),
        ("a\rb", unwritable("qID", "a\rb")),
        ("a;b", unwritable("qID", "a;b", separator=";")),
    ],
)
def test_writers_refuse_values_that_would_break_the_line(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_writable(value, "qID", separator=";")


def test_writers_accept_a_separator_where_the_format_allows_it() -> None:
    check_writable("a;b", "PassageText")
