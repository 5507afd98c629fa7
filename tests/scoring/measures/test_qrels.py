"""PR qrels derived from marked AC runs (docs/formats.md)."""

from __future__ import annotations

import re

import pytest

from scoring.measures.ac import BAD_MARK
from scoring.measures.qrels import derive_pr_qrels, pr_qrels_lines
from submissions.formats.ac_run import NuggetRecord
from submissions.formats.common import (
    MALFORMED_PASSAGE_KEY,
    NONPOSITIVE_PASSAGE_RANK,
    PassageKey,
)
from submissions.formats.marked_ac_run import MARKS, MarkedNugget
from tests.scoring.measures.marked_run import MarkedBlock


def marked_nuggets(blocks: list[MarkedBlock]) -> list[MarkedNugget]:
    return [
        MarkedNugget(NuggetRecord(block.qid, num, PassageKey(run, rank), "n"), MARKS[mark])
        for block in blocks
        for num, (mark, run, rank) in enumerate(block.nuggets, start=1)
    ]


def nugget(qid: str, mark: str, key: str) -> MarkedNugget:
    return MarkedNugget(NuggetRecord(qid, 1, PassageKey.parse(key), "n"), mark)  # type: ignore[arg-type]


def read_qrels(text: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        qid, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def test_the_toy_run_derives_the_example_pr_qrels(toy_marked_run, examples_dir):
    expected = (examples_dir / "pr.qrels").read_text(encoding="utf-8")

    qrels = derive_pr_qrels([marked_nuggets(toy_marked_run)])

    # tests/data/README.md: D001 nuggets 1 and 2 (R) both cite WASEDA-PO-1:1; D003 nugget
    # 1 (R) cites WASEDA-PO-1:1 and nugget 2 (R) KYOTO-PG-1:1; no D002 nugget is R.
    assert qrels == {"D001": {"WASEDA-PO-1:1": 2},
                     "D003": {"KYOTO-PG-1:1": 1, "WASEDA-PO-1:1": 1}}
    assert qrels == read_qrels(expected)
    assert pr_qrels_lines(qrels) == expected.splitlines()


def test_grades_add_up_relevant_nuggets_over_all_ac_runs():
    run_1 = [nugget("D1", "R", "A-PO-1:1"), nugget("D1", "R", "A-PO-1:1")]
    run_2 = [nugget("D1", "R", "A-PO-1:1"), nugget("D1", "R", "B-PG-1:2")]

    assert derive_pr_qrels([run_1, run_2]) == {"D1": {"A-PO-1:1": 3, "B-PG-1:2": 1}}


@pytest.mark.parametrize("mark", ["B", "N"])
def test_bogus_and_nonrelevant_nuggets_do_not_make_a_passage_relevant(mark):
    run = [nugget("D1", mark, "A-PO-1:1"), nugget("D2", "R", "A-PO-1:2")]

    assert derive_pr_qrels([run]) == {"D2": {"A-PO-1:2": 1}}


def test_the_same_rank_under_another_question_is_another_passage():
    run = [nugget("D1", "R", "A-PO-1:1"), nugget("D2", "R", "A-PO-1:1")]

    assert derive_pr_qrels([run]) == {"D1": {"A-PO-1:1": 1}, "D2": {"A-PO-1:1": 1}}


def test_derived_document_ids_are_the_passage_keys_written_out_in_order():
    # derive_pr_qrels writes the ids itself rather than through str(PassageKey): they must
    # be the same text, questions by id and passages by (run, rank as a number).
    keys = [PassageKey("B-PG-1", 10), PassageKey("A-PO-1", 10), PassageKey("B-PG-1", 2)]
    run = [MarkedNugget(NuggetRecord(qid, 1, key, "n"), "R")
           for qid in ("D2", "D1") for key in keys]

    qrels = derive_pr_qrels([run])

    assert list(qrels) == ["D1", "D2"]
    assert list(qrels["D1"]) == [str(key) for key in sorted(keys)]


def test_qrels_lines_sort_ranks_as_numbers():
    qrels = {"D1": {"A-PO-1:10": 1, "A-PO-1:2": 2}}

    assert pr_qrels_lines(qrels) == ["D1 A-PO-1:2 2", "D1 A-PO-1:10 1"]


def test_a_passage_key_round_trips_through_its_document_id():
    key = PassageKey("WASEDA-PO-1", 12)

    assert str(key) == "WASEDA-PO-1:12"
    assert PassageKey.parse("WASEDA-PO-1:12") == key


@pytest.mark.parametrize("text", ["WASEDA-PO-1", ":3", "RUN:x", "RUN:-1", "RUN:"])
def test_it_rejects_a_malformed_passage_key(text):
    with pytest.raises(ValueError, match=re.escape(MALFORMED_PASSAGE_KEY.format(text=text))):
        PassageKey.parse(text)


def test_it_rejects_rank_zero():
    with pytest.raises(ValueError, match=re.escape(NONPOSITIVE_PASSAGE_RANK.format(rank=0))):
        PassageKey.parse("RUN:0")


def test_it_rejects_an_unknown_mark():
    with pytest.raises(ValueError, match=re.escape(BAD_MARK.format(mark="?"))):
        derive_pr_qrels([[nugget("D1", "?", "A-PO-1:1")]])
