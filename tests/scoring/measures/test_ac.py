"""AC measures: accuracy, nugget precision, O/U/R_O/R_U/HMR (NTCIR-19 R2C2 task
definition), ECE and Brier."""

from __future__ import annotations

import re

import pytest

from scoring.measures.ac import (
    BAD_CONFIDENCE,
    BAD_MARK,
    BAD_PROBABILITY,
    DUPLICATE_QUESTION,
    NO_QUESTIONS,
    UNKNOWN_QUESTION,
    JudgedAnswer,
    brier_score,
    calibration_bins,
    expected_calibration_error,
    hmr,
    nugget_precision,
    score_ac_run,
)
from tests.scoring.measures.marked_run import MarkedBlock

TOY_QIDS = ("D001", "D002", "D003")
# tests/data/README.md: Buzz Aldrin (D002) was not the first person on the Moon.
INCORRECT_IN_TOY = {"D002"}


def toy_answers(blocks: list[MarkedBlock]) -> dict[str, JudgedAnswer]:
    return {
        block.qid: JudgedAnswer(
            correct=block.qid not in INCORRECT_IN_TOY,
            confidence=block.confidence,
            marks=tuple(mark for mark, _run, _rank in block.nuggets),
        )
        for block in blocks
    }


def answers(*specs: tuple[str, bool, int]) -> dict[str, JudgedAnswer]:
    return {qid: JudgedAnswer(correct=ok, confidence=c) for qid, ok, c in specs}


def test_the_toy_run_is_read_with_the_confidences_of_the_example(toy_marked_run):
    assert [(b.qid, b.confidence) for b in toy_marked_run] == [
        ("D001", 75),
        ("D002", 85),
        ("D003", 95),
    ]


def test_the_toy_campaign_scores_as_the_examples_readme_says(toy_marked_run):
    # tests/data/README.md, worked by hand there (R2C2 task definition,
    # docs/measures.md): I+ = {D001, D003}, I- = {D002}, p = 0.75, 0.85, 0.95.
    # O = 0.85; U = (1 - 0.75) + (1 - 0.95) = 0.30; R_O = 1 - 0.85/1 = 0.15;
    # R_U = 1 - 0.30/2 = 0.85; HMR = 2 * 0.15 * 0.85 / (0.15 + 0.85) = 0.255.
    # Nugget precision: D001 R,R,B -> 2/3; D002 N,B -> 0; D003 R,R,N -> 2/3; mean 4/9.
    scores = score_ac_run(qids=TOY_QIDS, answers=toy_answers(toy_marked_run))

    assert scores.accuracy == pytest.approx(2 / 3)
    assert scores.nugget_precision == pytest.approx(4 / 9)
    assert scores.o == pytest.approx(0.85)
    assert scores.u == pytest.approx(0.25 + 0.05)
    assert scores.r_o == pytest.approx(0.15)
    assert scores.r_u == pytest.approx(0.85)
    assert scores.hmr == pytest.approx(0.255)


def test_the_toy_campaign_has_the_readmes_per_question_nugget_precision(toy_marked_run):
    scores = score_ac_run(qids=TOY_QIDS, answers=toy_answers(toy_marked_run)).by_qid()

    assert scores["D001"].nugget_precision == pytest.approx(2 / 3)  # R, R, B
    assert scores["D002"].nugget_precision == 0.0  # N, B: entailed is not relevant
    assert scores["D003"].nugget_precision == pytest.approx(2 / 3)  # R, R, N
    assert [scores[q].correct for q in TOY_QIDS] == [True, False, True]


def test_the_toy_campaign_ece_and_brier_are_as_computed_by_hand(toy_marked_run):
    # One answer per bin (0.75 -> [0.7, 0.8), 0.85 -> [0.8, 0.9), 0.95 -> [0.9, 1.0]), so
    # ECE = (|1 - 0.75| + |0 - 0.85| + |1 - 0.95|) / 3 = 1.15 / 3 (Naeini et al. 2015;
    # Guo et al. 2017 eq. 3) and Brier = (0.25^2 + 0.85^2 + 0.05^2) / 3 = 0.7875 / 3
    # (Brier 1950); tests/data/README.md.
    scores = score_ac_run(qids=TOY_QIDS, answers=toy_answers(toy_marked_run))

    assert scores.ece == pytest.approx(0.383333, abs=1e-6)
    assert scores.brier == pytest.approx(0.2625)


def test_the_leaderboard_row_has_the_designed_columns(toy_marked_run):
    row = score_ac_run(qids=TOY_QIDS, answers=toy_answers(toy_marked_run)).leaderboard_row()

    assert list(row) == ["accuracy", "nugget_precision", "r_o", "r_u", "hmr", "ece", "brier"]
    assert (row["r_o"], row["r_u"]) == (pytest.approx(0.15), pytest.approx(0.85))


@pytest.mark.parametrize(
    ("marks", "expected"),
    [
        ((), 0.0),  # none returned: 0 by definition
        (("R",), 1.0),
        (("R", "R", "B"), 2 / 3),  # bogus nuggets count in the denominator
        (("N",), 0.0),
        (("B", "B", "N", "R"), 1 / 4),
    ],
)
def test_nugget_precision_is_relevant_over_all_returned(marks, expected):
    # R2C2 task definition (docs/measures.md).
    assert nugget_precision(marks) == pytest.approx(expected)


def test_an_all_correct_run_has_r_o_one_because_i_minus_is_empty():
    # I- empty -> R_O = 1; U = 0.5 + 0.5 -> R_U = 1 - 1/2; HMR = 2 * 1 * 0.5 / 1.5.
    scores = score_ac_run(qids=("a", "b"), answers=answers(("a", True, 50), ("b", True, 50)))

    assert (scores.r_o, scores.r_u) == (1.0, pytest.approx(0.5))
    assert scores.hmr == pytest.approx(2 / 3)


def test_an_all_incorrect_run_has_r_u_one_because_i_plus_is_empty():
    # I+ empty -> R_U = 1; O = 0.2 + 0.4 -> R_O = 1 - 0.6/2 = 0.7.
    scores = score_ac_run(qids=("a", "b"), answers=answers(("a", False, 20), ("b", False, 40)))

    assert scores.accuracy == 0.0
    assert (scores.r_o, scores.r_u) == (pytest.approx(0.7), 1.0)
    assert scores.hmr == pytest.approx(2 * 0.7 / 1.7)


@pytest.mark.parametrize(
    ("correct", "confidence", "r_o", "r_u"),
    [
        (True, 100, 1.0, 1.0),  # sure and right: perfect
        (True, 0, 1.0, 0.0),  # right but no confidence: U = 1
        (False, 0, 1.0, 1.0),  # wrong and said so: perfect
        (False, 100, 0.0, 1.0),  # sure and wrong: O = 1
    ],
)
def test_confidence_0_and_100_give_the_extreme_calibration_scores(correct, confidence, r_o, r_u):
    scores = score_ac_run(qids=("a",), answers=answers(("a", correct, confidence)))

    assert (scores.r_o, scores.r_u) == (r_o, r_u)
    assert scores.hmr == hmr(r_o, r_u)


def test_hmr_is_zero_when_both_ratios_are_zero():
    # Right with confidence 0 (R_U = 0) and wrong with confidence 100 (R_O = 0): HMR is
    # defined as 0 there rather than 0/0.
    scores = score_ac_run(qids=("a", "b"), answers=answers(("a", True, 0), ("b", False, 100)))

    assert (scores.r_o, scores.r_u, scores.hmr) == (0.0, 0.0, 0.0)


def test_a_run_missing_questions_is_scored_over_the_whole_campaign():
    # N = 4; the two missing questions are incorrect with p = 0 and precision 0, so
    # O = 0 -> R_O = 1; U = 0.2 + 0.2 -> R_U = 1 - 0.4/2 = 0.8.
    given = {
        "a": JudgedAnswer(correct=True, confidence=80, marks=("R", "R")),
        "b": JudgedAnswer(correct=True, confidence=80, marks=("R", "B")),
    }
    scores = score_ac_run(qids=("a", "b", "c", "d"), answers=given)

    assert scores.n_questions == 4
    assert scores.accuracy == 0.5
    assert scores.nugget_precision == pytest.approx((1 + 0.5 + 0 + 0) / 4)
    assert (scores.o, scores.r_o, scores.r_u) == (0.0, 1.0, pytest.approx(0.8))
    assert scores.hmr == pytest.approx(2 * 0.8 / 1.8)
    assert [q.answered for q in scores.questions] == [True, True, False, False]


def test_a_run_with_no_answers_is_perfectly_calibrated_by_definition():
    # Every question is incorrect with p = 0: O = 0 and I+ is empty, so R_O = R_U = 1.
    # The definition rewards an empty run with HMR 1; accuracy 0 is what exposes it.
    scores = score_ac_run(qids=("a", "b"), answers={})

    assert (scores.accuracy, scores.r_o, scores.r_u, scores.hmr) == (0.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("confidence", range(101))
def test_each_integer_confidence_falls_in_its_tenth(confidence):
    # [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0]: confidence 100 goes in the last bin.
    assert calibration_bins([confidence / 100]).tolist() == [min(confidence // 10, 9)]


@pytest.mark.parametrize(
    ("probabilities", "correct", "expected"),
    [
        # 0.9 right (+0.1) and 1.0 wrong (-1.0) share the last bin: |1 - 1.9| / 2.
        ([0.9, 1.0], [True, False], 0.45),
        # 0.7 and 0.79 share [0.7, 0.8): |1 - 1.49| / 2.
        ([0.7, 0.79], [False, True], 0.245),
        # 0.69 and 0.7 are in different bins: (|1 - 0.69| + |0 - 0.7|) / 2.
        ([0.69, 0.7], [True, False], 0.505),
        ([], [], 0.0),
    ],
)
def test_ece_weights_each_bins_gap_by_its_share_of_answers(probabilities, correct, expected):
    # Naeini et al., AAAI 2015; Guo et al., ICML 2017, eq. 3.
    assert expected_calibration_error(probabilities, correct) == pytest.approx(expected)


def test_brier_is_the_mean_squared_error_of_the_confidences():
    # Brier 1950: ((1 - 1)^2 + (0 - 0)^2 + (0.5 - 1)^2) / 3.
    assert brier_score([1.0, 0.0, 0.5], [True, False, True]) == pytest.approx(0.25 / 3)


@pytest.mark.parametrize("confidence", [-1, 101, 50.5, True])
def test_it_rejects_a_confidence_outside_0_to_100(confidence):
    with pytest.raises(ValueError, match=re.escape(BAD_CONFIDENCE.format(confidence=confidence))):
        JudgedAnswer(correct=True, confidence=confidence)


def test_it_rejects_an_unknown_nugget_mark():
    with pytest.raises(ValueError, match=re.escape(BAD_MARK.format(mark="X"))):
        JudgedAnswer(correct=True, confidence=5, marks=("R", "X"))


@pytest.mark.parametrize(
    ("qids", "given", "message"),
    [
        ((), {}, NO_QUESTIONS),
        (("a", "a"), {}, DUPLICATE_QUESTION.format(qid="a")),
        (("a",), answers(("z", True, 1)), UNKNOWN_QUESTION.format(qid="z")),
    ],
)
def test_it_rejects_an_inconsistent_campaign(qids, given, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        score_ac_run(qids=qids, answers=given)


def test_it_rejects_probabilities_outside_0_to_1():
    with pytest.raises(ValueError, match=re.escape(BAD_PROBABILITY)):
        brier_score([1.2], [True])
