from __future__ import annotations

import io
import re

import pytest

from submissions.formats.ac_run import (
    BAD_PR_RUN_NAME,
    UNKNOWN_PASSAGE_RANK,
    AnswerRecord,
    NuggetRecord,
    parse_ac_run,
)
from submissions.formats.answer_blocks import DUPLICATE_NUGGET_NUM, MISMATCHED_CLOSING_TAG
from submissions.formats.common import BAD_INTEGER, PassageKey, Problem
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.limits import TOO_LONG
from submissions.formats.marked_ac_run import (
    BAD_MARK,
    Mark,
    MarkedAnswerRecord,
    MarkedNugget,
    parse_marked_ac_run,
    write_marked_ac_run,
)
from tests.submissions.formats.support import QIDS, SHARED_PR_RUNS, bio, example_bytes


def marked(mark: Mark, qid: str, num: int, run: str, rank: int, text: str) -> MarkedNugget:
    return MarkedNugget(NuggetRecord(qid, num, PassageKey(run, rank), text), mark)


# What a careful assessor makes of WASEDA-AC-1 (tests/data/README.md, "The judgments, and
# why"): D001 is correct, its nuggets 1 and 2 lead to the answer (R) and nugget 3 is not
# entailed by its passage (B); D002 is wrong, so its entailed nugget 1 is N and nugget 2,
# contradicted by KYOTO-PG-1 rank 1, is B; D003 is correct with R, R and an unhelpful N.
WASEDA_AC_1_MARKED = [
    MarkedAnswerRecord(
        "D001",
        "China National Space Administration",
        75,
        (
            marked(
                "R",
                "D001",
                1,
                "WASEDA-PO-1",
                1,
                "Chang'e 4 made the first soft landing on the far side of the Moon.",
            ),
            marked(
                "R",
                "D001",
                2,
                "WASEDA-PO-1",
                1,
                "Chang'e 4 is a mission of the China National Space Administration.",
            ),
            marked(
                "B",
                "D001",
                3,
                "WASEDA-PO-1",
                3,
                "Chang'e 4 was launched by the European Space Agency.",
            ),
        ),
    ),
    MarkedAnswerRecord(
        "D002",
        "Buzz Aldrin",
        85,
        (
            marked(
                "N",
                "D002",
                1,
                "WASEDA-PO-1",
                2,
                "Buzz Aldrin walked on the Moon during the Apollo 11 mission.",
            ),
            marked("B", "D002", 2, "KYOTO-PG-1", 1, "Buzz Aldrin was the commander of Apollo 11."),
        ),
    ),
    MarkedAnswerRecord(
        "D003",
        "Mars",
        95,
        (
            marked("R", "D003", 1, "WASEDA-PO-1", 1, "Mars has a mean diameter of about 6,779 km."),
            marked(
                "R", "D003", 2, "KYOTO-PG-1", 1, "Mercury has a mean diameter of about 4,879 km."
            ),
            marked("N", "D003", 3, "WASEDA-PO-1", 1, "Mars is the fourth planet from the Sun."),
        ),
    ),
]


def parse(content: str | bytes) -> list[Problem]:
    return parse_marked_ac_run(
        bio(content), known_qids=QIDS, shared_pr_runs=SHARED_PR_RUNS
    ).problems


def block(*lines: str, qid: str = "D001") -> str:
    return "".join(f"{line}\n" for line in (f"<{qid}>", *lines, f"</{qid}>"))


def test_the_example_marked_run_parses_to_the_marks_the_judge_should_give() -> None:
    result = parse_marked_ac_run(
        bio(example_bytes("WASEDA-AC-1.marked")), known_qids=QIDS, shared_pr_runs=SHARED_PR_RUNS
    )
    assert result.problems == []
    assert result.records == WASEDA_AC_1_MARKED


def test_the_example_marked_run_is_the_example_ac_run_with_marks() -> None:
    unmarked = [record.unmarked() for record in WASEDA_AC_1_MARKED]
    assert unmarked == parse_ac_run(bio(example_bytes("WASEDA-AC-1"))).records


def test_writing_the_parsed_example_gives_back_its_bytes() -> None:
    out = io.StringIO()
    write_marked_ac_run(parse_marked_ac_run(bio(example_bytes("WASEDA-AC-1.marked"))).records, out)
    assert out.getvalue().encode() == example_bytes("WASEDA-AC-1.marked")


def test_it_marks_an_answer_by_nugget_num() -> None:
    answer = WASEDA_AC_1_MARKED[0].unmarked()
    assert (
        MarkedAnswerRecord.from_answer(answer, {1: "R", 2: "R", 3: "B"}) == (WASEDA_AC_1_MARKED[0])
    )
    # Nugget 3 has no mark: the KeyError names it (str(KeyError(3)) is "3").
    with pytest.raises(KeyError, match=r"^3$"):
        MarkedAnswerRecord.from_answer(answer, {1: "R", 2: "R"})


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("X;1;WASEDA-PO-1;1;A nugget.", "X"),
        ("1;WASEDA-PO-1;1;A nugget.", "1"),
        ("r;1;WASEDA-PO-1;1;A nugget.", "r"),
        ("RR;1;WASEDA-PO-1;1;A nugget.", "RR"),
        ("R", "R"),
        (" R;1;WASEDA-PO-1;1;A nugget.", " R"),
    ],
)
def test_it_reports_a_nugget_line_without_a_valid_mark(line: str, found: str) -> None:
    assert parse(block("x;1", line)) == [Problem(3, "Mark", BAD_MARK.format(found))]


@pytest.mark.parametrize("mark", ["B", "R", "N"])
def test_it_accepts_the_marks_b_r_and_n(mark: Mark) -> None:
    result = parse_marked_ac_run(bio(block("x;1", f"{mark};1;WASEDA-PO-1;1;A nugget.")))
    assert result.records == [
        MarkedAnswerRecord(
            "D001", "x", 1, (marked(mark, "D001", 1, "WASEDA-PO-1", 1, "A nugget."),)
        )
    ]


def test_it_checks_the_rest_of_a_marked_line_as_an_ac_nugget_line() -> None:
    content = block("x;1", "R;1;WASEDA-PO-1;4;A.", "N;0;WASEDA-AC-1;1;B.", "B;1;KYOTO-PG-1;1;C.")
    assert parse(content) == [
        Problem(3, "PassageRank", UNKNOWN_PASSAGE_RANK.format(4, "WASEDA-PO-1", "D001", "1, 2, 3")),
        Problem(4, "NuggetNum", BAD_INTEGER.format("NuggetNum", "0", 1, 10)),
        Problem(4, "PRrunname", BAD_PR_RUN_NAME.format("WASEDA-AC-1")),
        Problem(5, "NuggetNum", DUPLICATE_NUGGET_NUM.format(1, "D001", 3)),
    ]


def test_it_checks_blocks_as_an_ac_run_does() -> None:
    assert parse("<D001>\nx;1\n</D003>\n") == [
        Problem(3, "tag", MISMATCHED_CLOSING_TAG.format("D003", "D001", 1))
    ]


@pytest.mark.parametrize(
    ("line", "field", "column"),
    [
        ("R\x00;1;WASEDA-PO-1;1;t", "Mark", 2),
        ("R;1;WASEDA-PO-1;1;t\x00", "Nugget", 20),
        ("R;1;WASEDA-PO-1\x00;1;t", "PRrunname", 16),
    ],
)
def test_it_names_a_control_character_by_its_field_and_column_in_the_whole_line(
    line: str, field: str, column: int
) -> None:
    problems = parse(block("x;1", line))
    assert problems[0] == Problem(
        3, field, CONTROL_CHARACTER.format(0, column, NO_CONTROLS_BUT_TAB)
    )


def test_it_holds_nuggets_to_max_answer_chars() -> None:
    result = parse_marked_ac_run(bio(block("x;1", "R;1;WASEDA-PO-1;1;123456")), max_answer_chars=5)
    assert result.problems == [Problem(3, "Nugget", TOO_LONG.format(6, "Nugget", 5))]


def test_the_writer_refuses_an_unknown_mark() -> None:
    nugget = NuggetRecord("D001", 1, PassageKey("WASEDA-PO-1", 1), "t")
    record = MarkedAnswerRecord("D001", "x", 1, (MarkedNugget(nugget, "X"),))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^" + re.escape("Mark 'X' is not B, R or N") + "$"):
        write_marked_ac_run([record], io.StringIO())


def test_unmarked_gives_back_the_answer_record() -> None:
    record = WASEDA_AC_1_MARKED[1]
    assert record.unmarked() == AnswerRecord(
        "D002",
        "Buzz Aldrin",
        85,
        (record.nuggets[0].nugget, record.nuggets[1].nugget),
    )
