"""trec_eval qrels, `qid iter docid rel` (the manual qrels of a meta-evaluation), read
as usnistgov/trec_eval's get_qrels.c reads them."""

from __future__ import annotations

import pytest

from submissions.formats.common import EMPTY_FILE, INVALID_UTF8, Problem
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.trec_qrels import (
    BAD_LEVEL,
    DUPLICATE_JUDGMENT,
    TREC_QRELS_FIELD_COUNT,
    UNKNOWN_QUERY,
    parse_trec_qrels,
)
from tests.submissions.formats.support import QIDS, bio


def test_it_reads_levels_by_query_and_docid_ignoring_the_iter_column() -> None:
    qrels = parse_trec_qrels(bio("D001 0 d1 2\nD001\tQ0\td2\t0\n\n# note\nD002 iter1 d1 -2\n"),
                             known_qids=QIDS)
    assert qrels.problems == []
    assert qrels.levels == {"D001": {"d1": 2, "d2": 0}, "D002": {"d1": -2}}
    assert qrels.judgments == 3


@pytest.mark.parametrize(("line", "problem"), [
    ("D001 0 d1", Problem(1, "line", TREC_QRELS_FIELD_COUNT.format(3))),
    ("D001 0 d1 1 extra", Problem(1, "line", TREC_QRELS_FIELD_COUNT.format(5))),
    ("D001 0 d1 1.0", Problem(1, "rel", BAD_LEVEL.format("1.0"))),
    ("D001 0 d1 +1", Problem(1, "rel", BAD_LEVEL.format("+1"))),
    ("D001 0 d1 128", Problem(1, "rel", BAD_LEVEL.format("128"))),
    ("D001 0 d1 -128", Problem(1, "rel", BAD_LEVEL.format("-128"))),
    ("D001 0 d1 --1", Problem(1, "rel", BAD_LEVEL.format("--1"))),
    ("D404 0 d1 1", Problem(1, "qid", UNKNOWN_QUERY.format("D404"))),
    ("D001 0 d\x001 1", Problem(1, "line", CONTROL_CHARACTER.format(0, 9, NO_CONTROLS_BUT_TAB))),
])
def test_a_bad_line_is_named_and_left_out(line: str, problem: Problem) -> None:
    qrels = parse_trec_qrels(bio(f"{line}\nD002 0 d5 1\n"), known_qids=QIDS)
    assert qrels.problems == [problem]
    assert qrels.levels == {"D002": {"d5": 1}}


def test_a_pair_judged_twice_names_both_lines() -> None:
    qrels = parse_trec_qrels(bio("D001 0 d1 1\nD001 0 d2 1\nD001 0 d1 0\n"))
    assert qrels.problems == [Problem(3, "docid", DUPLICATE_JUDGMENT.format("d1", "D001", 1))]
    assert not qrels.ok


def test_bytes_that_are_not_utf8_are_named_by_line() -> None:
    qrels = parse_trec_qrels(bio(b"D001 0 d1 1\nD001 0 \xff 1\n"))
    assert qrels.problems == [Problem(2, "line", INVALID_UTF8.format("0xFF", 8))]


@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n"])
def test_a_file_without_judgments_is_refused(content: str) -> None:
    assert parse_trec_qrels(bio(content)).problems == [
        Problem(0, "file", EMPTY_FILE.format("qrels line"))]
