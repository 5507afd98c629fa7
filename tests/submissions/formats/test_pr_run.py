from __future__ import annotations

import io

import pytest

from submissions.formats.common import (
    BAD_INTEGER,
    BLANK_LINE,
    CARRIAGE_RETURN,
    CHUNK_SIZE,
    EMPTY_FIELD,
    EMPTY_FILE,
    INVALID_UTF8,
    UNKNOWN_QID,
    Problem,
)
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.limits import MAX_PASSAGE_CHARS, TOO_LONG
from submissions.formats.pr_run import (
    DUPLICATE_RANK,
    FIELD_COUNT,
    MAX_DOC_ID_CHARS,
    PR_LINE_FORMAT,
    TOO_MANY_PASSAGES,
    PassageRecord,
    _diagnose,
    iter_pr_run,
    parse_pr_run,
    returned_ranks,
    validate_pr_run,
    write_pr_run,
)
from submissions.formats.run_names import is_pr_run_name
from tests.submissions.formats.support import (
    QIDS,
    SHARED_PR_RUNS,
    TrickleReader,
    bio,
    example_bytes,
    unwritable,
)

# tests/data/toy/WASEDA-PO-1 and KYOTO-PG-1, transcribed by hand; some passage texts hold
# ';' (the last field takes the rest of the line) and D001 rank 1 a non-ASCII letter.
WASEDA_PO_1 = [
    PassageRecord(
        "D001",
        1,
        "chang-e-4",
        (
            "Chang'e 4 is a robotic mission of the China National Space Administration; "
            "on 3 January 2019 it made the first soft landing on the far side of the Moon, "
            "in the Von K\u00e1rm\u00e1n crater."
        ),
    ),
    PassageRecord(
        "D001",
        2,
        "luna-3",
        (
            "The far side of the Moon was first photographed in October 1959 by the "
            "Soviet probe Luna 3."
        ),
    ),
    PassageRecord(
        "D001",
        3,
        "chang-e-4-launch",
        (
            "Chang'e 4 was launched on 7 December 2018 on a Long March 3B rocket from "
            "the Xichang Satellite Launch Center."
        ),
    ),
    PassageRecord(
        "D002",
        1,
        "apollo-11",
        (
            "Apollo 11 landed on the Moon on 20 July 1969; Neil Armstrong was the first "
            "person to step onto the lunar surface, and Buzz Aldrin followed him."
        ),
    ),
    PassageRecord(
        "D002",
        2,
        "buzz-aldrin",
        "Buzz Aldrin, the lunar module pilot of Apollo 11, walked on the Moon on 20 July 1969.",
    ),
    PassageRecord(
        "D003",
        1,
        "mars",
        (
            "Mars is the fourth planet from the Sun; its mean diameter is about 6,779 km, "
            "roughly half that of Earth."
        ),
    ),
    PassageRecord("D003", 2, "mars-moons", "Mars has two small moons, Phobos and Deimos."),
]
KYOTO_PG_1 = [
    PassageRecord(
        "D001",
        1,
        "chang-e-4",
        (
            "In January 2019 China's Chang'e 4 lander and its Yutu-2 rover reached the "
            "far side of the Moon."
        ),
    ),
    PassageRecord(
        "D001",
        2,
        "far-side",
        "Because the Moon is tidally locked, its far side is never visible from Earth.",
    ),
    PassageRecord(
        "D002",
        1,
        "apollo-11",
        (
            "Neil Armstrong, the commander of Apollo 11, became the first person to walk "
            "on the Moon in July 1969."
        ),
    ),
    PassageRecord(
        "D003",
        1,
        "mercury",
        "Mercury, the smallest planet of the Solar System, has a mean diameter of about 4,879 km.",
    ),
]
EXAMPLES = {"WASEDA-PO-1": WASEDA_PO_1, "KYOTO-PG-1": KYOTO_PG_1}


def problems_of(
    content: str | bytes, *, known_qids: frozenset[str] | None = None, max_rank: int = 20
) -> list[Problem]:
    """The problems `parse_pr_run` finds, checking that `validate_pr_run` finds the same."""
    result = parse_pr_run(bio(content), known_qids=known_qids, max_rank=max_rank)
    assert validate_pr_run(bio(content), known_qids=known_qids, max_rank=max_rank) == (
        result.problems
    )
    return result.problems


def rank_problem(line: int, found: str, max_rank: int = 20) -> Problem:
    return Problem(line, "PassageRank", BAD_INTEGER.format("PassageRank", found, 1, max_rank))


# --- the toy examples --------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_example_pr_runs_parse_to_the_passages_they_hold(name: str) -> None:
    result = parse_pr_run(bio(example_bytes(name)), known_qids=QIDS)
    assert result.problems == []
    assert result.records == EXAMPLES[name]


@pytest.mark.parametrize("name", EXAMPLES)
def test_writing_a_parsed_example_gives_back_its_bytes(name: str) -> None:
    out = io.StringIO()
    write_pr_run(parse_pr_run(bio(example_bytes(name))).records, out)
    assert out.getvalue().encode() == example_bytes(name)


@pytest.mark.parametrize("name", EXAMPLES)
def test_it_lists_the_ranks_each_run_returned_per_question(name: str) -> None:
    assert returned_ranks(EXAMPLES[name]) == SHARED_PR_RUNS[name]


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_example_pr_runs_are_valid(name: str) -> None:
    assert validate_pr_run(bio(example_bytes(name)), known_qids=QIDS) == []


# --- one rule at a time --------------------------------------------------------------------


@pytest.mark.parametrize("found", ["21", "0", "100", "999999999"])
def test_it_reports_a_rank_outside_1_to_20(found: str) -> None:
    assert problems_of(f"D001;{found};d;text\n") == [rank_problem(1, found)]


@pytest.mark.parametrize("found", ["", "x", "+1", "-1", " 1", "1 ", "1.0", "1e1", "\u0661", "0x1"])
def test_it_reports_a_rank_that_is_not_a_plain_integer(found: str) -> None:
    assert problems_of(f"D001;{found};d;text\n") == [rank_problem(1, found)]


def test_it_shortens_a_long_rank_in_the_message() -> None:
    assert problems_of("D001;" + "7" * 50 + ";d;text\n") == [rank_problem(1, "7" * 39 + "\u2026")]


def test_it_accepts_ranks_1_to_20_with_or_without_leading_zeros() -> None:
    content = "".join(f"D001;{rank};d{rank};text\n" for rank in range(1, 21)).replace(";7;", ";07;")
    result = parse_pr_run(bio(content))
    assert result.problems == []
    assert [record.rank for record in result.records] == list(range(1, 21))


def test_it_takes_the_largest_rank_from_max_rank() -> None:
    assert problems_of("D001;6;d;text\n", max_rank=5) == [rank_problem(1, "6", max_rank=5)]
    assert problems_of("D001;6;d;text\n", max_rank=6) == []


def test_it_reports_a_tie_naming_the_first_line_with_that_rank() -> None:
    content = "D001;1;a;text\nD002;1;b;text\nD001;1;c;text\n"
    assert problems_of(content) == [Problem(3, "PassageRank", DUPLICATE_RANK.format(1, "D001", 1))]


def test_it_reports_every_passage_past_20_for_a_question() -> None:
    lines = [f"D001;{rank};d;text\n" for rank in range(1, 21)] + ["D001;1;d;text\n"] * 2
    assert problems_of("".join(lines)) == [
        Problem(21, "PassageRank", DUPLICATE_RANK.format(1, "D001", 1)),
        Problem(21, "line", TOO_MANY_PASSAGES.format(21, "D001", 20)),
        Problem(22, "PassageRank", DUPLICATE_RANK.format(1, "D001", 1)),
        Problem(22, "line", TOO_MANY_PASSAGES.format(22, "D001", 20)),
    ]


def test_it_counts_lines_with_a_bad_rank_towards_the_passages_of_a_question() -> None:
    lines = [f"D001;{rank};d;text\n" for rank in range(1, 21)] + ["D001;x;d;text\n"]
    assert problems_of("".join(lines)) == [
        rank_problem(21, "x"),
        Problem(21, "line", TOO_MANY_PASSAGES.format(21, "D001", 20)),
    ]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (";1;d;text", "qID"),
        (" \t;1;d;text", "qID"),
        ("D001;1;;text", "docID"),
        ("D001;1; ;text", "docID"),
        ("D001;1;d;", "PassageText"),
        ("D001;1;d;  ", "PassageText"),
    ],
)
def test_it_reports_an_empty_or_blank_field(line: str, field: str) -> None:
    assert problems_of(line + "\n") == [Problem(1, field, EMPTY_FIELD.format(field))]


def test_it_reports_every_problem_of_a_line() -> None:
    assert problems_of(";0;;\n") == [
        Problem(1, "qID", EMPTY_FIELD.format("qID")),
        rank_problem(1, "0"),
        Problem(1, "docID", EMPTY_FIELD.format("docID")),
        Problem(1, "PassageText", EMPTY_FIELD.format("PassageText")),
    ]


@pytest.mark.parametrize(("line", "count"), [("D001;1;d", 3), ("D001", 1), ("D001;1", 2)])
def test_it_reports_a_line_with_fewer_than_four_fields(line: str, count: int) -> None:
    assert problems_of(line + "\n") == [Problem(1, "line", FIELD_COUNT.format(count))]


def test_the_passage_text_may_hold_semicolons() -> None:
    result = parse_pr_run(bio("D001;1;d;a;b;;c;\n"))
    assert result.problems == []
    assert result.records == [PassageRecord("D001", 1, "d", "a;b;;c;")]


def test_it_reports_a_question_that_is_not_in_the_campaign() -> None:
    content = "D001;1;d;text\nD009;1;d;text\n"
    assert problems_of(content, known_qids=QIDS) == [Problem(2, "qID", UNKNOWN_QID.format("D009"))]
    assert problems_of(content) == []


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("\nD001;1;d;text\n", 1),
        ("D001;1;d;text\n\n", 2),
        ("D001;1;d;text\n \t\n", 2),
        ("D001;1;d;text\r\n\r\n", 2),
    ],
)
def test_it_reports_a_blank_line(content: str, line: int) -> None:
    assert problems_of(content) == [Problem(line, "line", BLANK_LINE.format(PR_LINE_FORMAT))]


def test_it_reports_bytes_that_are_not_utf8_and_keeps_checking_the_line() -> None:
    content = b"D001;1;d;ok\nD001;x;d;caf\xe9\n"
    assert problems_of(content) == [
        Problem(2, "line", INVALID_UTF8.format("0xE9", 13)),
        rank_problem(2, "x"),
    ]


def test_it_still_checks_ties_on_a_line_whose_text_is_not_utf8() -> None:
    content = b"D001;1;d;ok\nD001;1;d;\xff\n"
    assert problems_of(content) == [
        Problem(2, "line", INVALID_UTF8.format("0xFF", 10)),
        Problem(2, "PassageRank", DUPLICATE_RANK.format(1, "D001", 1)),
    ]


@pytest.mark.parametrize("content", ["D001;1;d;te\rxt\n", "D001;1;d;text\r\r\n", "D\r001;1;d;t\n"])
def test_it_reports_a_carriage_return_inside_a_line(content: str) -> None:
    assert problems_of(content) == [Problem(1, "line", CARRIAGE_RETURN)]


@pytest.mark.parametrize(
    "content",
    [
        b"D001;1;d;text\r\nD001;2;d;more\r\n",
        b"\xef\xbb\xbfD001;1;d;text\nD001;2;d;more\n",
        b"D001;1;d;text\nD001;2;d;more",
        b"D001;1;d;text\nD001;2;d;more\r",
    ],
)
def test_it_accepts_crlf_a_byte_order_mark_and_a_missing_final_newline(content: bytes) -> None:
    result = parse_pr_run(bio(content))
    assert result.problems == []
    assert result.records == [
        PassageRecord("D001", 1, "d", "text"),
        PassageRecord("D001", 2, "d", "more"),
    ]


def test_it_reports_an_empty_file() -> None:
    assert problems_of(b"") == [Problem(0, "file", EMPTY_FILE.format("passage line"))]
    assert problems_of(b"\xef\xbb\xbf") == [Problem(0, "file", EMPTY_FILE.format("passage line"))]


def test_it_reports_the_problems_of_every_line_in_file_order() -> None:
    content = "D001;1;d;text\nD001;21;d;text\n\nD002;1;d\nD001;1;d;text\n"
    assert problems_of(content) == [
        rank_problem(2, "21"),
        Problem(3, "line", BLANK_LINE.format(PR_LINE_FORMAT)),
        Problem(4, "line", FIELD_COUNT.format(3)),
        Problem(5, "PassageRank", DUPLICATE_RANK.format(1, "D001", 1)),
    ]


def test_records_hold_only_the_lines_without_problems() -> None:
    content = "D001;1;d;one\nD001;21;d;two\nD009;2;d;three\nD001;1;d;four\nD001;3;d;five\n"
    result = parse_pr_run(bio(content), known_qids=QIDS)
    assert [record.text for record in result.records] == ["one", "five"]


# --- control characters and lengths (docs/formats.md) -----------------------------------------


def control(line: int, field: str, code: int, column: int) -> Problem:
    return Problem(line, field, CONTROL_CHARACTER.format(code, column, NO_CONTROLS_BUT_TAB))


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"D0\x0001;1;d;t", control(1, "qID", 0, 3)),
        (b"D001;\x081;d;t", control(1, "PassageRank", 8, 6)),
        (b"D001;1;d\x1f;t", control(1, "docID", 0x1F, 9)),
        (b"D001;1;d;a;b\x00c", control(1, "PassageText", 0, 13)),
        (b"D001;1;d;\x7f", control(1, "PassageText", 0x7F, 10)),
        ("D001;1;d;caf\u00e9\u009b".encode(), control(1, "PassageText", 0x9B, 14)),
    ],
)
def test_it_names_a_control_character_by_its_field_and_column(
    line: bytes, problem: Problem
) -> None:
    problems = problems_of(line + b"\n")
    assert problems[0] == problem
    assert parse_pr_run(bio(line)).records == []


def test_it_allows_tabs_and_non_breaking_spaces_in_a_passage() -> None:
    content = "D001;1;d;a\tb\u00a0c\n".encode()
    assert problems_of(content) == []
    assert parse_pr_run(bio(content)).records == [PassageRecord("D001", 1, "d", "a\tb\u00a0c")]


def test_a_carriage_return_inside_a_line_is_reported_once_not_as_a_control_character() -> None:
    assert problems_of(b"D001;1;d;te\rxt\x01\n") == [
        Problem(1, "line", CARRIAGE_RETURN),
        control(1, "PassageText", 1, 15),
    ]


def test_it_finds_a_control_character_deep_in_a_large_file() -> None:
    # Past the first chunks: the block screen, not only the first lines, must see it.
    data = big_run(10)
    at = data.index(b"word", 3 * CHUNK_SIZE)
    data = data[:at] + b"\x00" + data[at + 1 :]
    line = data.count(b"\n", 0, at) + 1
    column = at - data.rindex(b"\n", 0, at)
    assert problems_of(data) == [control(line, "PassageText", 0, column)]


@pytest.mark.parametrize("passage", ["p", "\u00e9"])
def test_a_passage_may_have_max_passage_chars_characters_and_no_more(passage: str) -> None:
    # Counted in characters, whatever their size in bytes.
    at_most = f"D001;1;d;{passage * MAX_PASSAGE_CHARS}\n"
    over = f"D001;1;d;{passage * (MAX_PASSAGE_CHARS + 1)}\n"
    assert problems_of(at_most) == []
    assert problems_of(over) == [
        Problem(
            1,
            "PassageText",
            TOO_LONG.format(MAX_PASSAGE_CHARS + 1, "PassageText", MAX_PASSAGE_CHARS),
        )
    ]


def test_it_takes_the_longest_passage_from_max_passage_chars() -> None:
    content = "D001;1;d;12345\nD001;2;d;123456\n"
    result = parse_pr_run(bio(content), max_passage_chars=5)
    assert result.problems == [Problem(2, "PassageText", TOO_LONG.format(6, "PassageText", 5))]
    assert validate_pr_run(bio(content), max_passage_chars=5) == result.problems
    assert [record.rank for record in result.records] == [1]


def test_a_doc_id_may_be_as_wide_as_the_database_keeps_and_no_wider() -> None:
    assert problems_of(f"D001;1;{'d' * MAX_DOC_ID_CHARS};t\n") == []
    assert problems_of(f"D001;1;{'d' * (MAX_DOC_ID_CHARS + 1)};t\n") == [
        Problem(1, "docID", TOO_LONG.format(MAX_DOC_ID_CHARS + 1, "docID", MAX_DOC_ID_CHARS))
    ]


# --- reading ---------------------------------------------------------------------------------


def big_run(questions: int) -> bytes:
    text = "word " * 400
    return "".join(
        f"Q{q};{rank};doc{rank};{text}\n" for q in range(questions) for rank in range(1, 21)
    ).encode()


def test_it_yields_passages_before_it_has_read_the_whole_file() -> None:
    data = big_run(10)
    reader = TrickleReader(data, len(data))
    passages = iter_pr_run(reader, [])
    assert next(passages) == PassageRecord("Q0", 1, "doc1", "word " * 400)
    assert reader.position <= CHUNK_SIZE < len(data)


@pytest.mark.parametrize("step", [1, 3, 17, 1000, 70_000])
def test_it_parses_the_same_however_the_file_is_read(step: int) -> None:
    data = (
        big_run(2).replace(b"Q1;5;", b"Q1;x;").replace(b"word word", "w\u00f6rd w\u00f6rd".encode())
    )
    expected = parse_pr_run(bio(data))
    assert expected.problems == [rank_problem(25, "x")]
    assert parse_pr_run(TrickleReader(data, step)) == expected
    assert validate_pr_run(TrickleReader(data, step)) == expected.problems


@pytest.mark.parametrize(
    "line",
    [
        b"D001;1;d;text",
        b"D001;07;d;text",
        b"D001;1;d;text\r",
        b";1;d;t",
        b"D001;1;d;\xa0",
        "D001;1;d;\u00a0".encode(),
        "D001;1;d;\u3000".encode(),
        b"D001;1;d;\x1c",
        b"D001;1;\x0b;t",
        b"\xff;1;d;t",
        b"D001;1;d;t\xc3",
        b"D001;\xd9\xa1;d;t",
        b"D001;1;d;t\x00",
        b"D001;1;d;\tt\t",
        b"D001;1;d;t\x7f",
        b"D001;1;d;t\xc2\x85",
        b"D001;1;d;t\xc2\xa0",
        b"D001;1;d;t\x0c\r",
        b"D001;1;" + b"d" * 201 + b";t",
        b"D001;1;d;" + b"t" * 20_001,
        b"D001;1;d;" + "\u00e9".encode() * 10_001,
    ],
)
def test_the_fast_path_and_the_slow_path_agree_on_a_line(line: bytes) -> None:
    # pr_run checks a line twice over: a fast path that only accepts, and `_diagnose`,
    # which names problems. A line accepted by one must be accepted by the other.
    slow: list[Problem] = []
    _diagnose(line, 1, 20, slow)
    assert problems_of(line) == slow


# --- writing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (PassageRecord("D;1", 1, "d", "t"), unwritable("qID", "D;1", separator=";")),
        (PassageRecord("D001", 1, "d;x", "t"), unwritable("docID", "d;x", separator=";")),
        (PassageRecord("D001", 1, "d", "two\nlines"), unwritable("PassageText", "two\nlines")),
        (PassageRecord("D001", 1, "d", "t\r"), unwritable("PassageText", "t\r")),
    ],
)
def test_the_writer_refuses_a_record_that_would_not_read_back(
    record: PassageRecord, message: str
) -> None:
    out = io.StringIO()
    with pytest.raises(ValueError, match=message):
        write_pr_run([record], out)
    assert out.getvalue() == ""


# --- run names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("WASEDA-PO-1", True),
        ("KYOTO-PG-4", True),
        ("NTT-DOCOMO-PG-12", True),
        ("WASEDA-AC-1", False),
        ("WASEDA-PO-0", False),
        ("WASEDA-PO-", False),
        ("-PO-1", False),
        ("WASEDA PO-1", False),
        ("WA:SEDA-PO-1", False),
        ("WASEDA-po-1", False),
        ("", False),
        ("WA\x00SEDA-PO-1", False),
        ("WASEDA\x7f-PO-1", False),
        ("WASEDA\u0085-PO-1", False),
        ("W\u00c4SEDA-PO-1", True),
    ],
)
def test_it_recognises_pr_run_names(name: str, valid: bool) -> None:
    assert is_pr_run_name(name) is valid
