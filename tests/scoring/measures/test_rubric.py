"""RUBRIC / EXAM++ labels, Rubric-Qrels and Rubric-Cover@k (Farzi & Dietz, ICTIR 2024)."""

from __future__ import annotations

import re

import pytest

from scoring.measures.rubric import (
    BAD_GRADE,
    UNKNOWN_ITEM,
    rubric_cover_at_k,
    rubric_cover_run,
    rubric_label,
    rubric_qrels,
    rubric_qrels_lines,
)

ITEMS = ("q1", "q2", "q3", "q4")
GRADES = {
    "p1": {"q1": 5, "q2": 1},
    "p2": {"q2": 4},
    "p3": {"q3": 4, "q1": 4},
    "p4": {"q4": 3},
}


@pytest.mark.parametrize(
    ("rule", "min_grade", "expected"),
    [
        ("max", 4, 5),  # highest self-rating
        ("count", 4, 2),  # items graded >= 4: q1 and q3
        ("count", 5, 1),
        ("count", 2, 3),
    ],
)
def test_a_passage_label_is_its_best_grade_or_its_count_of_answered_items(
    rule, min_grade, expected
):
    assert rubric_label({"q1": 5, "q2": 2, "q3": 4}, rule=rule, min_grade=min_grade) == expected


def test_an_ungraded_passage_is_labelled_zero():
    assert rubric_label({}) == 0


def test_rubric_qrels_list_every_graded_passage_in_trec_eval_format():
    qrels = rubric_qrels({"Q": GRADES})

    assert qrels == {"Q": {"p1": 5, "p2": 4, "p3": 4, "p4": 3}}
    assert rubric_qrels_lines(qrels) == ["Q 0 p1 5", "Q 0 p2 4", "Q 0 p3 4", "Q 0 p4 3"]


@pytest.mark.parametrize(
    ("k", "min_grade", "expected"),
    [
        (1, 4, 1 / 4),  # p1 covers q1
        (2, 4, 2 / 4),  # p2 adds q2
        (3, 4, 3 / 4),  # p3 adds q3 (q1 again)
        (4, 4, 3 / 4),  # p4's 3 is below the threshold
        (4, 3, 4 / 4),
        (4, 5, 1 / 4),
    ],
)
def test_rubric_cover_is_the_share_of_items_answered_in_the_top_k(k, min_grade, expected):
    ranking = ["p1", "p2", "p3", "p4"]

    assert rubric_cover_at_k(ranking, GRADES, ITEMS, k=k, min_grade=min_grade) == expected


def test_a_run_scores_zero_cover_on_a_query_it_did_not_answer():
    scores = rubric_cover_run(
        rankings={"A": ["p1"]},
        grades={"A": GRADES, "B": GRADES},
        items={"A": ITEMS, "B": ITEMS, "empty": ()},
        k=10,
    )

    assert scores.per_question == {"A": 0.25, "B": 0.0}
    assert scores.mean == 0.125


@pytest.mark.parametrize("grade", [-1, 6, 2.5])
def test_it_rejects_a_grade_outside_0_to_5(grade):
    with pytest.raises(ValueError, match=re.escape(BAD_GRADE.format(grade=grade))):
        rubric_label({"q1": grade})


def test_it_rejects_a_grade_on_an_item_outside_the_test_bank():
    with pytest.raises(ValueError, match=re.escape(UNKNOWN_ITEM.format(passage="p1", item="q9"))):
        rubric_cover_at_k(["p1"], {"p1": {"q9": 5}}, ITEMS, k=1)
