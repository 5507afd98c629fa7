from __future__ import annotations

import io
import re

import pytest

from submissions.formats.ac_run import (
    BAD_PR_RUN_NAME,
    NUGGET_FIELD_COUNT,
    UNKNOWN_PASSAGE_RANK,
    UNKNOWN_PR_RUN,
    AnswerRecord,
    NuggetRecord,
    SharedPrRuns,
    parse_ac_run,
    write_ac_run,
)
from submissions.formats.answer_blocks import (
    ANSWER_LINE_FORMAT,
    ANSWER_WITHOUT_SEPARATOR,
    DUPLICATE_BLOCK,
    DUPLICATE_NUGGET_NUM,
    MISMATCHED_CLOSING_TAG,
    MISSING_ANSWER,
    NESTED_BLOCK,
    NUGGET_LINE_FORMAT,
    OUTSIDE_BLOCK,
    TOO_MANY_NUGGETS,
    UNTERMINATED_BLOCK,
)
from submissions.formats.common import (
    BAD_INTEGER,
    BLANK_LINE,
    CARRIAGE_RETURN,
    EMPTY_FIELD,
    EMPTY_FILE,
    INVALID_UTF8,
    UNKNOWN_QID,
    PassageKey,
    Problem,
)
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.limits import MAX_ANSWER_CHARS, TOO_LONG
from tests.submissions.formats.support import (
    QIDS,
    SHARED_PR_RUNS,
    bio,
    example_bytes,
    unwritable,
)


def nugget(qid: str, num: int, run: str, rank: int, text: str) -> NuggetRecord:
    return NuggetRecord(qid, num, PassageKey(run, rank), text)


# tests/data/toy/WASEDA-AC-1, transcribed by hand: it cites both PR runs, and D001's
# nuggets 1 and 2 and D003's nuggets 1 and 3 cite the same passage.
WASEDA_AC_1 = [
    AnswerRecord(
        "D001",
        "China National Space Administration",
        75,
        (
            nugget(
                "D001",
                1,
                "WASEDA-PO-1",
                1,
                "Chang'e 4 made the first soft landing on the far side of the Moon.",
            ),
            nugget(
                "D001",
                2,
                "WASEDA-PO-1",
                1,
                "Chang'e 4 is a mission of the China National Space Administration.",
            ),
            nugget(
                "D001", 3, "WASEDA-PO-1", 3, "Chang'e 4 was launched by the European Space Agency."
            ),
        ),
    ),
    AnswerRecord(
        "D002",
        "Buzz Aldrin",
        85,
        (
            nugget(
                "D002",
                1,
                "WASEDA-PO-1",
                2,
                "Buzz Aldrin walked on the Moon during the Apollo 11 mission.",
            ),
            nugget("D002", 2, "KYOTO-PG-1", 1, "Buzz Aldrin was the commander of Apollo 11."),
        ),
    ),
    AnswerRecord(
        "D003",
        "Mars",
        95,
        (
            nugget("D003", 1, "WASEDA-PO-1", 1, "Mars has a mean diameter of about 6,779 km."),
            nugget("D003", 2, "KYOTO-PG-1", 1, "Mercury has a mean diameter of about 4,879 km."),
            nugget("D003", 3, "WASEDA-PO-1", 1, "Mars is the fourth planet from the Sun."),
        ),
    ),
]


def parse(
    content: str | bytes,
    *,
    known_qids: frozenset[str] | None = QIDS,
    shared_pr_runs: SharedPrRuns | None = SHARED_PR_RUNS,
) -> list[Problem]:
    """The problems of an AC run, checked against the toy campaign by default."""
    return parse_ac_run(bio(content), known_qids=known_qids, shared_pr_runs=shared_pr_runs).problems


def block(*lines: str, qid: str = "D001") -> str:
    return "".join(f"{line}\n" for line in (f"<{qid}>", *lines, f"</{qid}>"))


NUGGET = "1;WASEDA-PO-1;1;A nugget."


# --- the toy example ---------------------------------------------------------------------


def test_the_example_ac_run_parses_to_the_answers_and_nuggets_it_holds() -> None:
    result = parse_ac_run(
        bio(example_bytes("WASEDA-AC-1")), known_qids=QIDS, shared_pr_runs=SHARED_PR_RUNS
    )
    assert result.problems == []
    assert result.records == WASEDA_AC_1


def test_writing_the_parsed_example_gives_back_its_bytes() -> None:
    out = io.StringIO()
    write_ac_run(parse_ac_run(bio(example_bytes("WASEDA-AC-1"))).records, out)
    assert out.getvalue().encode() == example_bytes("WASEDA-AC-1")


# --- the answer line -------------------------------------------------------------------------


@pytest.mark.parametrize("found", ["101", "-1", "x", "", "50%", " 50", "0.5"])
def test_it_reports_a_confidence_outside_0_to_100(found: str) -> None:
    assert parse(block(f"An answer;{found}")) == [
        Problem(2, "Confidence", BAD_INTEGER.format("Confidence", found, 0, 100))
    ]


@pytest.mark.parametrize("confidence", [0, 100])
def test_it_accepts_a_confidence_of_0_and_of_100(confidence: int) -> None:
    result = parse_ac_run(bio(block(f"An answer;{confidence}")))
    assert result.records == [AnswerRecord("D001", "An answer", confidence, ())]


def test_the_answer_may_hold_semicolons_and_the_confidence_follows_the_last() -> None:
    result = parse_ac_run(bio(block("a;b; c;7")))
    assert result.problems == []
    assert result.records == [AnswerRecord("D001", "a;b; c", 7, ())]


def test_it_reports_an_answer_line_without_a_semicolon() -> None:
    assert parse(block("Buzz Aldrin 85")) == [
        Problem(2, "line", ANSWER_WITHOUT_SEPARATOR.format("Buzz Aldrin 85"))
    ]


@pytest.mark.parametrize("answer", ["", "  "])
def test_it_reports_an_empty_answer(answer: str) -> None:
    assert parse(block(f"{answer};50")) == [Problem(2, "Answer", EMPTY_FIELD.format("Answer"))]


def test_it_reports_a_block_closed_without_an_answer_line() -> None:
    assert parse(block()) == [Problem(2, "line", MISSING_ANSWER.format("D001"))]


# --- nugget lines ----------------------------------------------------------------------------


def test_a_block_may_have_no_nuggets_and_nugget_text_may_hold_semicolons() -> None:
    result = parse_ac_run(bio(block("x;1") + block("y;2", "1;KYOTO-PG-1;1;a;b;", qid="D002")))
    assert result.problems == []
    assert result.records == [
        AnswerRecord("D001", "x", 1, ()),
        AnswerRecord("D002", "y", 2, (nugget("D002", 1, "KYOTO-PG-1", 1, "a;b;"),)),
    ]


def test_it_reports_every_nugget_line_past_10() -> None:
    nuggets = [f"{num};WASEDA-PO-1;1;Nugget {num}." for num in range(1, 11)]
    assert parse(block("x;1", *nuggets, "1;WASEDA-PO-1;2;More.")) == [
        Problem(13, "line", TOO_MANY_NUGGETS.format(11, "D001", 10)),
        Problem(13, "NuggetNum", DUPLICATE_NUGGET_NUM.format(1, "D001", 3)),
    ]


@pytest.mark.parametrize("found", ["0", "11", "x", "", "+1"])
def test_it_reports_a_nugget_num_outside_1_to_10(found: str) -> None:
    assert parse(block("x;1", f"{found};WASEDA-PO-1;1;A nugget.")) == [
        Problem(3, "NuggetNum", BAD_INTEGER.format("NuggetNum", found, 1, 10))
    ]


def test_it_reports_a_nugget_num_used_twice_in_a_block_but_not_across_blocks() -> None:
    content = block("x;1", NUGGET, "2;WASEDA-PO-1;2;B.", "1;WASEDA-PO-1;3;C.") + block(
        "y;1", "1;WASEDA-PO-1;1;D.", qid="D002"
    )
    assert parse(content) == [Problem(5, "NuggetNum", DUPLICATE_NUGGET_NUM.format(1, "D001", 3))]


@pytest.mark.parametrize(("line", "count"), [("1;WASEDA-PO-1;1", 3), ("A nugget.", 1)])
def test_it_reports_a_nugget_line_with_fewer_than_four_fields(line: str, count: int) -> None:
    assert parse(block("x;1", line)) == [Problem(3, "line", NUGGET_FIELD_COUNT.format(count))]


@pytest.mark.parametrize("run", ["WASEDA-AC-1", "WASEDA", "", " WASEDA-PO-1"])
def test_it_reports_a_run_name_that_is_not_a_pr_run_name(run: str) -> None:
    problems = [Problem(3, "PRrunname", BAD_PR_RUN_NAME.format(run))]
    assert parse(block("x;1", f"1;{run};1;A nugget.")) == problems
    assert parse(block("x;1", f"1;{run};1;A nugget."), shared_pr_runs=None) == problems


def test_it_reports_a_pr_run_that_was_not_shared() -> None:
    assert parse(block("x;1", "1;TOKYO-PO-1;1;A nugget.")) == [
        Problem(3, "PRrunname", UNKNOWN_PR_RUN.format("TOKYO-PO-1", "KYOTO-PG-1, WASEDA-PO-1"))
    ]
    assert parse(block("x;1", "1;TOKYO-PO-1;1;A nugget."), shared_pr_runs={}) == [
        Problem(3, "PRrunname", UNKNOWN_PR_RUN.format("TOKYO-PO-1", "none"))
    ]


@pytest.mark.parametrize(
    ("qid", "line", "returned"),
    [("D001", "1;WASEDA-PO-1;4;A nugget.", "1, 2, 3"), ("D002", "1;KYOTO-PG-1;2;A nugget.", "1")],
)
def test_it_reports_a_rank_the_cited_run_did_not_return_for_the_question(
    qid: str, line: str, returned: str
) -> None:
    run, rank = line.split(";")[1], int(line.split(";")[2])
    assert parse(block("x;1", line, qid=qid)) == [
        Problem(3, "PassageRank", UNKNOWN_PASSAGE_RANK.format(rank, run, qid, returned))
    ]


def test_it_reports_a_rank_for_a_question_the_run_did_not_answer() -> None:
    shared = {"WASEDA-PO-1": {"D001": frozenset({1})}}
    assert parse(block("x;1", NUGGET, qid="D002"), shared_pr_runs=shared) == [
        Problem(3, "PassageRank", UNKNOWN_PASSAGE_RANK.format(1, "WASEDA-PO-1", "D002", "none"))
    ]


def test_without_shared_runs_it_accepts_any_well_formed_passage_key() -> None:
    assert parse(block("x;1", "1;TOKYO-PO-3;17;A nugget."), shared_pr_runs=None) == []


@pytest.mark.parametrize("found", ["0", "21", "x"])
def test_it_reports_a_passage_rank_outside_1_to_20(found: str) -> None:
    assert parse(block("x;1", f"1;WASEDA-PO-1;{found};A nugget.")) == [
        Problem(3, "PassageRank", BAD_INTEGER.format("PassageRank", found, 1, 20))
    ]


@pytest.mark.parametrize("text", ["", " "])
def test_it_reports_an_empty_nugget(text: str) -> None:
    assert parse(block("x;1", f"1;WASEDA-PO-1;1;{text}")) == [
        Problem(3, "Nugget", EMPTY_FIELD.format("Nugget"))
    ]


def test_it_reports_every_problem_of_a_nugget_line() -> None:
    assert parse(block("x;1", "0;WASEDA-XX-1;0;")) == [
        Problem(3, "NuggetNum", BAD_INTEGER.format("NuggetNum", "0", 1, 10)),
        Problem(3, "PRrunname", BAD_PR_RUN_NAME.format("WASEDA-XX-1")),
        Problem(3, "PassageRank", BAD_INTEGER.format("PassageRank", "0", 1, 20)),
        Problem(3, "Nugget", EMPTY_FIELD.format("Nugget")),
    ]


# --- blocks and tags ---------------------------------------------------------------------------


def test_it_reports_a_second_block_for_the_same_question() -> None:
    assert parse(block("x;1") + block("y;2")) == [
        Problem(4, "qID", DUPLICATE_BLOCK.format("D001", 1))
    ]


def test_it_reports_a_block_for_a_question_that_is_not_in_the_campaign() -> None:
    assert parse(block("x;1", qid="D009")) == [Problem(1, "qID", UNKNOWN_QID.format("D009"))]
    assert parse(block("x;1", qid="D009"), known_qids=None) == []


def test_it_reports_a_tag_without_a_qid() -> None:
    assert parse("<>\nx;1\n</>\n") == [Problem(1, "qID", EMPTY_FIELD.format("qID"))]


def test_it_reports_a_closing_tag_that_does_not_match() -> None:
    assert parse("<D001>\nx;1\n</D002>\n") == [
        Problem(3, "tag", MISMATCHED_CLOSING_TAG.format("D002", "D001", 1))
    ]


def test_it_reports_a_block_opened_inside_another() -> None:
    assert parse("<D001>\nx;1\n" + block("y;2", qid="D002")) == [
        Problem(3, "tag", NESTED_BLOCK.format("D002", "D001", 1, "D001"))
    ]


def test_it_reports_a_block_still_open_at_the_end_of_the_file() -> None:
    assert parse(block("x;1") + "<D002>\ny;2\n1;WASEDA-PO-1;1;A nugget.\n") == [
        Problem(4, "tag", UNTERMINATED_BLOCK.format("D002", "D002"))
    ]


@pytest.mark.parametrize(
    ("content", "line", "found"),
    [
        ("stray\n" + block("x;1"), 1, "stray"),
        (block("x;1") + "x;2\n", 4, "x;2"),
        ("</D001>\n" + block("x;1"), 1, "</D001>"),
        (block("x;1") + "D001\n", 4, "D001"),
        (block("x;1") + "<D002\n", 4, "<D002"),
    ],
)
def test_it_reports_content_outside_any_block(content: str, line: int, found: str) -> None:
    assert parse(content) == [Problem(line, "line", OUTSIDE_BLOCK.format(found))]


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("\n" + block("x;1"), 1, "an opening tag such as <D001>"),
        (block("x;1") + "\n", 4, "an opening tag such as <D001>"),
        ("<D001>\n\nx;1\n</D001>\n", 2, ANSWER_LINE_FORMAT),
        ("<D001>\nx;1\n \n</D001>\n", 3, NUGGET_LINE_FORMAT + " or </D001>"),
    ],
)
def test_it_reports_a_blank_line_saying_what_should_be_there(
    content: str, line: int, expected: str
) -> None:
    assert parse(content) == [Problem(line, "line", BLANK_LINE.format(expected))]


def test_it_reports_an_empty_file() -> None:
    assert parse("") == [Problem(0, "file", EMPTY_FILE.format("answer block"))]


def test_it_reports_lines_that_are_not_utf8_and_keeps_its_place() -> None:
    content = b"<D001>\nBuzz Aldrin;8\xff\n1;WASEDA-PO-1;1;A nugget.\n</D001>\n"
    # "Buzz Aldrin;8" is 13 bytes, so the bad byte is column 14 of line 2.
    assert parse(content) == [Problem(2, "line", INVALID_UTF8.format("0xFF", 14))]


def test_it_reports_a_carriage_return_inside_a_line() -> None:
    assert parse("<D001>\r\nx;1\r\n1;WASEDA-PO-1;1;a\rb\r\n</D001>\r\n") == [
        Problem(3, "line", CARRIAGE_RETURN)
    ]


def test_it_accepts_crlf_line_breaks_and_a_byte_order_mark() -> None:
    content = "\ufeff" + block("x;1", NUGGET).replace("\n", "\r\n")
    result = parse_ac_run(bio(content))
    assert result.problems == []
    assert result.records == [
        AnswerRecord("D001", "x", 1, (nugget("D001", 1, "WASEDA-PO-1", 1, "A nugget."),))
    ]


def test_records_hold_only_the_blocks_without_problems() -> None:
    content = block("x;1", NUGGET) + block("y;200", qid="D002") + block("z;3", qid="D003")
    result = parse_ac_run(bio(content))
    assert [record.qid for record in result.records] == ["D001", "D003"]


# --- control characters and lengths (docs/formats.md) -----------------------------------------


def control(line: int, field: str, code: int, column: int) -> Problem:
    return Problem(line, field, CONTROL_CHARACTER.format(code, column, NO_CONTROLS_BUT_TAB))


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (block("Buzz\x00Aldrin;85", NUGGET), control(2, "Answer", 0, 5)),
        (block("Buzz;Aldrin\x1b;85", NUGGET), control(2, "Answer", 0x1B, 12)),
        (block("Buzz Aldrin;8\x7f5", NUGGET), control(2, "Confidence", 0x7F, 14)),
        (block("x;1", "1;WASEDA-PO-1;1;A nug\x00get."), control(3, "Nugget", 0, 22)),
        (block("x;1", "1;WASEDA-PO-1;1;a;b\x85"), control(3, "Nugget", 0x85, 20)),
        (block("x;1", "\x011;WASEDA-PO-1;1;t"), control(3, "NuggetNum", 1, 1)),
        (block("x;1", "1;WASEDA-PO-1;\x0c1;t"), control(3, "PassageRank", 0x0C, 15)),
        ("<D001>\nx;1\n</D001\x00>\n", control(3, "qID", 0, 7)),
        ("stray\x00\n", control(1, "line", 0, 6)),
    ],
)
def test_it_names_a_control_character_by_its_field_and_column(
    content: str, problem: Problem
) -> None:
    result = parse_ac_run(bio(content), known_qids=None, shared_pr_runs=None)
    assert result.problems[0] == problem
    assert result.records == []


def test_a_block_opened_by_a_tag_with_a_control_character_gives_no_record() -> None:
    # No list of questions to check it against: only the control character refuses it.
    result = parse_ac_run(bio(block("x;1", qid="D0\x1f01")), known_qids=None)
    assert result.problems == [control(1, "qID", 0x1F, 4), control(3, "qID", 0x1F, 5)]
    assert result.records == []


def test_tabs_are_no_control_characters() -> None:
    result = parse_ac_run(bio(block("a\tb;5", "1;WASEDA-PO-1;1;c\td")))
    assert result.problems == []
    assert result.records == [
        AnswerRecord("D001", "a\tb", 5, (nugget("D001", 1, "WASEDA-PO-1", 1, "c\td"),))
    ]


@pytest.mark.parametrize(("field", "line"), [("Answer", 2), ("Nugget", 3)])
def test_an_answer_and_a_nugget_may_have_max_answer_chars_characters_and_no_more(
    field: str, line: int
) -> None:
    most = "\u00e9" * MAX_ANSWER_CHARS  # characters, not bytes
    at_most = block(f"{most};5", f"1;WASEDA-PO-1;1;{most}")
    answer, text = (most + "x", most) if field == "Answer" else (most, most + "x")
    over = block(f"{answer};5", f"1;WASEDA-PO-1;1;{text}")
    assert parse(at_most) == []
    assert parse(over) == [
        Problem(line, field, TOO_LONG.format(MAX_ANSWER_CHARS + 1, field, MAX_ANSWER_CHARS))
    ]


def test_it_takes_the_longest_answer_and_nugget_from_max_answer_chars() -> None:
    content = block("12345;5", "1;WASEDA-PO-1;1;123456") + block("123456;5", qid="D002")
    result = parse_ac_run(bio(content), max_answer_chars=5)
    assert result.problems == [
        Problem(3, "Nugget", TOO_LONG.format(6, "Nugget", 5)),
        Problem(6, "Answer", TOO_LONG.format(6, "Answer", 5)),
    ]
    assert result.records == []


# --- writing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (AnswerRecord("D;1", "x", 1, ()), unwritable("qID", "D;1", separator=";")),
        # `write_answer_block` builds this one itself: "</D001>" would read as a closing tag.
        (AnswerRecord("/D001", "x", 1, ()), "^" + re.escape("qID '/D001' starts with '/'") + "$"),
        (AnswerRecord("D001", "two\nlines", 1, ()), unwritable("Answer", "two\nlines")),
        (
            AnswerRecord("D001", "x", 1, (nugget("D001", 1, "A;B-PO-1", 1, "t"),)),
            unwritable("PRrunname", "A;B-PO-1", separator=";"),
        ),
        (
            AnswerRecord("D001", "x", 1, (nugget("D001", 1, "WASEDA-PO-1", 1, "t\r\n"),)),
            unwritable("Nugget", "t\r\n"),
        ),
    ],
)
def test_the_writer_refuses_a_record_that_would_not_read_back(
    record: AnswerRecord, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        write_ac_run([record], io.StringIO())
