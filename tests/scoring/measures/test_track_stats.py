"""A snapshot's statistics on its question x run matrices (`track_statistics`): the
intervals of several measures from one bootstrap, the HSD and ANOVA of the main one."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.measures.hsd import randomised_tukey_hsd
from scoring.measures.stats import bootstrap_cis, two_way_anova
from scoring.measures.track_stats import question_matrix, track_statistics


def test_a_question_matrix_has_a_column_per_run_and_zero_where_a_run_has_no_score():
    per_question = [{"q1": 0.5, "q2": 1.0}, {"q2": 0.25}, {}]

    matrix = question_matrix(per_question, ["q1", "q2"])

    np.testing.assert_array_equal(matrix, [[0.5, 0.0, 0.0], [1.0, 0.25, 0.0]])


def test_intervals_of_several_measures_are_each_measures_own():
    # Side by side in one bootstrap, each measure's columns see the resamples a call of
    # its own with the same seed draws: the intervals must be the same numbers, up to
    # the rounding of the resampled means (a wider matrix product sums in another order).
    rng = np.random.default_rng(4)
    matrices = {"a": rng.random((30, 4)), "b": rng.random((30, 4)),
                "c": np.full((30, 4), 0.5)}

    computed = track_statistics(matrices, main="a", run_names=list("WXYZ"),
                                n_permutations=200, seed=9)

    for key, matrix in matrices.items():
        alone = bootstrap_cis(matrix, seed=9)
        for ours, theirs in zip(computed.intervals[key], alone, strict=True):
            assert ours.mean == theirs.mean
            assert (ours.lower, ours.upper) == (pytest.approx(theirs.lower, abs=1e-12),
                                                pytest.approx(theirs.upper, abs=1e-12)), key


def test_the_hsd_and_anova_are_the_main_measures():
    rng = np.random.default_rng(5)
    matrices = {"a": rng.random((12, 3)), "b": rng.random((12, 3))}

    computed = track_statistics(matrices, main="b", run_names=["X", "Y", "Z"],
                                n_permutations=300, seed=2)

    alone = randomised_tukey_hsd(matrices["b"], run_names=["X", "Y", "Z"],
                                 n_permutations=300, seed=2)
    assert list(computed.hsd) == ["b"]
    np.testing.assert_array_equal(computed.hsd["b"].p_values, alone.p_values)
    assert computed.anova == two_way_anova(matrices["b"])


@pytest.mark.parametrize(("shape", "intervals", "hsd", "anova"), [
    ((1, 3), False, True, False),  # one question: no interval, no ANOVA
    ((5, 1), True, False, False),  # one run: nothing to compare it with
])
def test_what_cannot_be_computed_is_left_out(shape, intervals, hsd, anova):
    computed = track_statistics({"a": np.random.default_rng(1).random(shape)}, main="a",
                                run_names=[f"R{i}" for i in range(shape[1])],
                                n_permutations=100, seed=0)

    assert (bool(computed.intervals), bool(computed.hsd),
            computed.anova is not None) == (intervals, hsd, anova)
