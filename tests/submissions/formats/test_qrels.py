from __future__ import annotations

import io

import pytest

from submissions.formats.common import (
    BLANK_LINE,
    EMPTY_FIELD,
    EMPTY_FILE,
    UNKNOWN_QID,
    PassageKey,
    Problem,
)
from submissions.formats.qrels import (
    BAD_GRADE,
    BAD_PASSAGE_KEY,
    DUPLICATE_QREL,
    QRELS_FIELD_COUNT,
    QRELS_LINE_FORMAT,
    QrelsRecord,
    parse_pr_qrels,
    write_pr_qrels,
)
from tests.submissions.formats.support import QIDS, bio, example_bytes, unwritable

# The grade of a PassageKey is the number of relevant (R) nuggets citing it
# (docs/formats.md; tests/data/README.md): D001's nuggets 1 and 2 both cite WASEDA-PO-1:1, so 2;
# D003's R nuggets cite KYOTO-PG-1:1 and WASEDA-PO-1:1 once each (its nugget 3 is N).
PR_QRELS = [
    QrelsRecord("D001", PassageKey("WASEDA-PO-1", 1), 2),
    QrelsRecord("D003", PassageKey("KYOTO-PG-1", 1), 1),
    QrelsRecord("D003", PassageKey("WASEDA-PO-1", 1), 1),
]


def problems_of(content: str | bytes) -> list[Problem]:
    return parse_pr_qrels(bio(content), known_qids=QIDS).problems


def test_the_example_qrels_parse_to_the_grades_they_hold() -> None:
    result = parse_pr_qrels(bio(example_bytes("pr.qrels")), known_qids=QIDS)
    assert result.problems == []
    assert result.records == PR_QRELS


def test_writing_the_parsed_example_gives_back_its_bytes() -> None:
    out = io.StringIO()
    write_pr_qrels(parse_pr_qrels(bio(example_bytes("pr.qrels"))).records, out)
    assert out.getvalue().encode() == example_bytes("pr.qrels")


@pytest.mark.parametrize(
    ("line", "count"),
    [
        ("D001 WASEDA-PO-1:1", 2),
        ("D001\tWASEDA-PO-1:1\t1", 1),
        ("D001  WASEDA-PO-1:1 1", 4),
        ("D001 WASEDA-PO-1:1 1 ", 4),
    ],
)
def test_it_reports_a_line_without_three_space_separated_fields(line: str, count: int) -> None:
    assert problems_of(line + "\n") == [Problem(1, "line", QRELS_FIELD_COUNT.format(count))]


@pytest.mark.parametrize(
    "key",
    [
        "WASEDA-PO-1",
        "WASEDA-PO-1:",
        "WASEDA-PO-1:0",
        "WASEDA-PO-1:21",
        "WASEDA-PO-1:x",
        ":1",
        "WASEDA-AC-1:1",
        "WASEDA-PO-1;1",
    ],
)
def test_it_reports_a_passage_key_that_is_not_run_colon_rank(key: str) -> None:
    assert problems_of(f"D001 {key} 1\n") == [Problem(1, "PassageKey", BAD_PASSAGE_KEY.format(key))]


@pytest.mark.parametrize("grade", ["-1", "x", "", "1.5", "+2"])
def test_it_reports_a_grade_that_is_not_a_whole_number(grade: str) -> None:
    assert problems_of(f"D001 WASEDA-PO-1:1 {grade}\n") == [
        Problem(1, "grade", BAD_GRADE.format(grade))
    ]


def test_a_grade_of_0_is_allowed() -> None:
    assert problems_of("D001 WASEDA-PO-1:1 0\n") == []


def test_it_reports_the_same_question_and_key_twice() -> None:
    content = "D001 WASEDA-PO-1:1 1\nD002 WASEDA-PO-1:1 1\nD001 WASEDA-PO-1:1 2\n"
    assert problems_of(content) == [
        Problem(3, "PassageKey", DUPLICATE_QREL.format("D001", "WASEDA-PO-1:1", 1))
    ]


def test_it_reports_an_empty_or_unknown_question() -> None:
    assert problems_of(" WASEDA-PO-1:1 1\nD009 WASEDA-PO-1:1 1\n") == [
        Problem(1, "qID", EMPTY_FIELD.format("qID")),
        Problem(2, "qID", UNKNOWN_QID.format("D009")),
    ]


def test_it_reports_blank_lines_and_an_empty_file() -> None:
    assert problems_of("D001 WASEDA-PO-1:1 1\n\n") == [
        Problem(2, "line", BLANK_LINE.format(QRELS_LINE_FORMAT))
    ]
    assert problems_of("") == [Problem(0, "file", EMPTY_FILE.format("qrels line"))]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            QrelsRecord("D 1", PassageKey("WASEDA-PO-1", 1), 1),
            unwritable("qID", "D 1", separator=" "),
        ),
        (
            QrelsRecord("D001", PassageKey("WASEDA PO-1", 1), 1),
            unwritable("PassageKey", "WASEDA PO-1", separator=" "),
        ),
    ],
)
def test_the_writer_refuses_a_record_that_would_not_read_back(
    record: QrelsRecord, message: str
) -> None:
    out = io.StringIO()
    with pytest.raises(ValueError, match=message):
        write_pr_qrels([record], out)
    assert out.getvalue() == ""
