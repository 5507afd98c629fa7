"""Agreement figures against a case worked out by hand."""

from __future__ import annotations

import pytest

from grading.validation.figures import agreement, by_category, cohen_kappa

# Eight items, (human, judge); the judge gave no label on the seventh.
PAIRS = [(True, True), (True, True), (True, False), (False, False), (False, True),
         (False, False), (True, None), (False, False)]


def test_accuracy_kappa_and_confusion_match_the_hand_computation() -> None:
    # Agreement: items 1, 2, 4, 6, 8 -> p_o = 5/8. Human "true" 4/8; judge "true" 3/8
    # and "false" 4/8 -> p_e = 0.5 * 3/8 + 0.5 * 4/8 = 0.4375 (Cohen 1960), so
    # kappa = (0.625 - 0.4375) / (1 - 0.4375) = 1/3.
    figures = agreement(PAIRS)

    assert figures.accuracy == 5 / 8
    assert figures.kappa == pytest.approx(1 / 3)
    assert figures.unanswered == 1
    assert figures.confusion == {
        "human_true_judge_true": 2, "human_true_judge_false": 1, "human_true_judge_none": 1,
        "human_false_judge_true": 1, "human_false_judge_false": 3,
        "human_false_judge_none": 0,
    }


def test_precision_and_recall_of_bogus() -> None:
    # The judge said "bogus" (false) on items 3, 4, 6, 8: right on 4, 6, 8 -> 3/4.
    # Bogus by the human: items 4, 5, 6, 8, of which the judge found 4, 6, 8 -> 3/4.
    assert agreement(PAIRS).precision_recall(False) == (0.75, 0.75)
    assert agreement(PAIRS).as_json(bogus=True)["bogus_recall"] == 0.75


def test_kappa_is_undefined_when_both_sides_always_agree_on_one_label() -> None:
    assert cohen_kappa([(True, True), (True, True)]) is None
    assert cohen_kappa([]) is None


def test_accuracy_per_category_keeps_first_seen_order() -> None:
    assert by_category(["exact", "alias", "exact"], [(True, True), (True, False),
                                                     (False, True)]) == {
        "exact": {"items": 2, "accuracy": 0.5}, "alias": {"items": 1, "accuracy": 0.0}}
