"""CIs, paired t-test, two-way ANOVA, topic set size design and agreement measures."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats as sp_stats

from scoring.measures.stats import (
    BAD_LEVEL,
    BOOTSTRAP_RESAMPLES,
    CONSTANT_LEADERBOARD,
    DIFFERENT_RUNS,
    NOT_POSITIVE,
    NOT_SAME_ITEMS,
    TOO_FEW_SCORES,
    bootstrap_cis,
    cohen_kappa,
    kendall_tau,
    mean_ci,
    paired_t_test,
    spearman_rho,
    topic_set_size_ci,
    topic_set_size_t_test,
    two_way_anova,
)


def test_the_mean_ci_uses_the_t_distribution():
    # 1..5: mean 3, s = sqrt(2.5), t(4; 0.025) = 2.776445 (any t table), so the margin
    # is 2.776445 * sqrt(2.5) / sqrt(5).
    ci = mean_ci([1, 2, 3, 4, 5])

    assert ci.mean == 3.0
    assert ci.margin == pytest.approx(2.776445 * math.sqrt(2.5 / 5), abs=1e-6)
    assert (ci.lower, ci.upper) == (pytest.approx(3 - ci.margin), pytest.approx(3 + ci.margin))


def test_a_mean_ci_needs_two_scores():
    with pytest.raises(ValueError, match=re.escape(TOO_FEW_SCORES.format(n=1))):
        mean_ci([0.5])


def test_the_paired_t_test_matches_a_hand_computation():
    # d = 2, 1, 1, 2: mean 1.5, s = sqrt(1/3), t = 1.5 / (s / 2) = 3 sqrt(3), df = 3;
    # two-sided p = 2 P(T3 > 5.196) = 0.01385 (t table).
    result = paired_t_test([3, 4, 5, 6], [1, 3, 4, 4])

    assert result.mean_difference == 1.5
    assert result.t_statistic == pytest.approx(3 * math.sqrt(3))
    assert result.df == 3
    assert result.p_value == pytest.approx(0.01385, abs=5e-5)
    assert result.lower < 1.5 < result.upper


@pytest.mark.parametrize(
    ("a", "b", "t", "p"),
    [
        ([1, 2, 3], [1, 2, 3], 0.0, 1.0),  # identical runs
        ([2, 3, 4], [1, 2, 3], math.inf, 0.0),  # always better by exactly 1
    ],
)
def test_the_paired_t_test_handles_constant_differences(a, b, t, p):
    result = paired_t_test(a, b)

    assert (result.t_statistic, result.p_value) == (t, p)


def test_two_way_anova_matches_a_hand_computed_table():
    # [[1, 2], [3, 5]]: grand mean 2.75, topic means 1.5, 4, system means 2, 3.5;
    # SS_topic = 2 (1.25^2 + 1.25^2) = 6.25, SS_system = 2 (0.75^2 + 0.75^2) = 2.25,
    # SS_total = 8.75, so SS_residual = 0.25 on (2-1)(2-1) = 1 df (Sakai 2016, sec. 6).
    anova = two_way_anova([[1, 2], [3, 5]])

    assert (anova.ss_topic, anova.ss_system) == (pytest.approx(6.25), pytest.approx(2.25))
    assert anova.ss_residual == pytest.approx(0.25)
    assert anova.df_residual == 1
    assert anova.residual_variance == pytest.approx(0.25)
    assert anova.f_system == pytest.approx(9.0)


def test_two_way_anova_of_purely_additive_scores_has_no_residual():
    anova = two_way_anova([[0.1, 0.3, 0.6], [0.2, 0.4, 0.7]])

    assert anova.residual_variance == pytest.approx(0.0, abs=1e-15)


# Three topics, two runs: small enough to work everything out by hand.
#   run A = 0.6, 0.8, 1.0: mean 0.8, s^2 = (0.04 + 0 + 0.04) / 2 = 0.04, s = 0.2.
#   run B = 0.1, 0.7, 0.7: mean 0.5, s^2 = (0.16 + 0.04 + 0.04) / 2 = 0.12.
#   A - B = 0.5, 0.1, 0.3: mean 0.3, s^2 = (0.04 + 0.04 + 0) / 2 = 0.04, s = 0.2.
# df = 2 and t(2; 0.025) = 4.302653 (any t table).
SMALL_MATRIX = [[0.6, 0.1], [0.8, 0.7], [1.0, 0.7]]
RUN_A, RUN_B = [0.6, 0.8, 1.0], [0.1, 0.7, 0.7]


def test_the_mean_ci_of_three_topics_uses_t_with_two_degrees_of_freedom():
    # A: 4.302653 * 0.2 / sqrt(3) = 4.302653 * 0.115470 = 0.496828.
    # B: s / sqrt(3) = sqrt(0.12 / 3) = 0.2, so 4.302653 * 0.2 = 0.860531.
    a, b = mean_ci(RUN_A), mean_ci(RUN_B)

    assert (a.mean, a.margin) == (pytest.approx(0.8), pytest.approx(0.496828, abs=1e-6))
    assert (a.lower, a.upper) == (pytest.approx(0.303172, abs=1e-6),
                                  pytest.approx(1.296828, abs=1e-6))
    assert (b.mean, b.margin) == (pytest.approx(0.5), pytest.approx(0.860531, abs=1e-6))


def test_the_paired_t_test_of_three_topics_matches_a_hand_computation():
    # d = 0.5, 0.1, 0.3: the CI is 0.3 +- 4.302653 * 0.2 / sqrt(3) = 0.3 +- 0.496828;
    # t = 0.3 / (0.2 / sqrt(3)) = 1.5 sqrt(3) = 2.598076. With 2 df the t distribution
    # has a closed form, P(T > t) = (1 - t / sqrt(2 + t^2)) / 2 (Student 1908), so the
    # two-sided p = 1 - 2.598076 / sqrt(8.75) = 1 - 2.598076 / 2.958040 = 0.121690.
    result = paired_t_test(RUN_A, RUN_B)

    assert (result.mean_difference, result.df) == (pytest.approx(0.3), 2)
    assert result.t_statistic == pytest.approx(2.598076, abs=1e-6)
    assert result.p_value == pytest.approx(0.121690, abs=1e-6)
    assert (result.lower, result.upper) == (pytest.approx(-0.196828, abs=1e-6),
                                            pytest.approx(0.796828, abs=1e-6))


def test_two_way_anova_of_the_small_matrix_has_half_the_difference_variance():
    # Grand mean 0.65; topic means 0.35, 0.75, 0.85; run means 0.8, 0.5. The residuals
    # x - topic mean - run mean + grand mean are +-0.1 on topics 1 and 2 and 0 on topic
    # 3: SS_residual = 4 * 0.01 = 0.04 on (3 - 1)(2 - 1) = 2 df, so V_E = 0.02, half the
    # variance 0.04 of the differences A - B (Sakai 2016, section 6: sigma_t^2 = 2 V_E).
    anova = two_way_anova(SMALL_MATRIX)

    assert anova.df_residual == 2
    assert anova.residual_variance == pytest.approx(0.02)
    assert anova.f_system == pytest.approx(0.135 / 0.02)  # SS_system = 3 (0.15^2 + 0.15^2)


@pytest.mark.parametrize(("ci_width", "topics"), [(3.0, 2), (0.9, 3), (0.6, 4), (0.5, 5),
                                                 (0.28, 10)])
def test_the_ci_based_topic_set_size_is_the_first_n_whose_expected_width_fits(
    ci_width, topics
):
    # Sakai, "Topic set size design", IRJ 2016, section 5: the smallest n with
    #   E[W](n) = 2 t(n-1; 0.025) c4(n) sigma_t / sqrt(n) <= delta,
    # c4(n) = sqrt(2/(n-1)) Gamma(n/2) / Gamma((n-1)/2), the bias of the sample SD
    # (c4(2) = sqrt(2/pi) = 0.797885, c4(3) = sqrt(pi)/2 = 0.886227, c4(4) = 0.921318,
    # c4(5) = 0.939986, c4(9) = 0.969311, c4(10) = 0.972659; any control-chart table).
    # V_E = 0.02 (the small matrix above) gives sigma_t = sqrt(2 V_E) = 0.2, so with the
    # t table (t(1) = 12.706205, t(2) = 4.302653, t(3) = 3.182446, t(4) = 2.776445,
    # t(8) = 2.306004, t(9) = 2.262157):
    #   E[W](2) = 0.4 * 12.706205 * 0.797885 / sqrt(2)  = 2.86748
    #   E[W](3) = 0.4 *  4.302653 * 0.886227 / sqrt(3)  = 0.88060
    #   E[W](4) = 0.4 *  3.182446 * 0.921318 / 2        = 0.58641
    #   E[W](5) = 0.4 *  2.776445 * 0.939986 / sqrt(5)  = 0.46686
    #   E[W](9) = 0.4 *  2.306004 * 0.969311 / 3        = 0.29803
    #   E[W](10) = 0.4 * 2.262157 * 0.972659 / sqrt(10) = 0.27832
    # and E[W] falls with n: delta = 0.9 first fits at n = 3, 0.28 at n = 10, and so on.
    assert topic_set_size_ci(residual_variance=0.02, ci_width=ci_width) == topics


def test_the_ci_based_topic_set_size_is_above_the_normal_approximation():
    # n' = 4 z^2 sigma_t^2 / delta^2 = 4 * 1.96^2 * 0.04 / 0.01 = 61.5 (Sakai 2016, sec. 5).
    assert topic_set_size_ci(residual_variance=0.02, ci_width=0.1) >= 62


def test_the_t_test_topic_set_size_matches_the_textbook_value_for_effect_size_half():
    # sigma_t = sqrt(2 * 0.02) = 0.2 and minD = 0.1 give d = 0.5; a two-sided paired
    # t-test at alpha 0.05 needs 34 pairs for power 0.8 (G*Power; Cohen 1988).
    assert topic_set_size_t_test(residual_variance=0.02, min_difference=0.1) == 34


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"residual_variance": 0.0, "ci_width": 0.1},
            NOT_POSITIVE.format(name="residual_variance", value=0.0),
        ),
        (
            {"residual_variance": 0.1, "ci_width": -1.0},
            NOT_POSITIVE.format(name="ci_width", value=-1.0),
        ),
        (
            {"residual_variance": 0.1, "ci_width": 0.1, "alpha": 1.5},
            BAD_LEVEL.format(name="alpha", value=1.5),
        ),
    ],
)
def test_topic_set_size_rejects_nonsense(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        topic_set_size_ci(**kwargs)


LEADERBOARD_A = {"r1": 0.4, "r2": 0.3, "r3": 0.2, "r4": 0.1}
LEADERBOARD_B = {"r1": 0.9, "r2": 0.5, "r3": 0.6, "r4": 0.1}  # r2 and r3 swapped


def test_kendalls_tau_counts_concordant_pairs():
    # 6 pairs, 5 concordant, 1 discordant: tau = (5 - 1) / 6 (Kendall 1938).
    assert kendall_tau(LEADERBOARD_A, LEADERBOARD_B).statistic == pytest.approx(2 / 3)


def test_spearmans_rho_uses_squared_rank_differences():
    # rank differences 0, 1, 1, 0: rho = 1 - 6 * 2 / (4 * 15) (Spearman 1904).
    assert spearman_rho(LEADERBOARD_A, LEADERBOARD_B).statistic == pytest.approx(0.8)


def test_identical_leaderboards_correlate_perfectly():
    assert kendall_tau(LEADERBOARD_A, LEADERBOARD_A).statistic == pytest.approx(1.0)
    assert spearman_rho(LEADERBOARD_A, LEADERBOARD_A).statistic == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("other", "message"),
    [
        ({"r1": 0.1, "r2": 0.2, "r3": 0.3, "r5": 0.4}, DIFFERENT_RUNS.format(only="r4, r5")),
        ({"r1": 0.5, "r2": 0.5, "r3": 0.5, "r4": 0.5}, CONSTANT_LEADERBOARD),
    ],
)
def test_leaderboards_that_cannot_be_correlated_are_rejected(other, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        kendall_tau(LEADERBOARD_A, other)


@pytest.mark.parametrize(
    ("a", "b", "kappa"),
    [
        # p_o = 4/5, p_e = (3/5)(2/5) + (2/5)(3/5) = 12/25: (0.8 - 0.48) / 0.52 = 8/13.
        ([1, 1, 0, 0, 1], [1, 0, 0, 0, 1], 8 / 13),
        # p_o = 0, p_e = 1/2: kappa = -1.
        (["R", "N", "R", "N"], ["N", "R", "N", "R"], -1.0),
        (["R", "N", "B"], ["R", "N", "B"], 1.0),
        (["R", "R"], ["R", "R"], 1.0),  # p_e = 1: reported as perfect agreement
    ],
)
def test_cohens_kappa_corrects_agreement_for_chance(a, b, kappa):
    # Cohen 1960: (p_o - p_e) / (1 - p_e).
    assert cohen_kappa(a, b) == pytest.approx(kappa)


def test_cohens_kappa_needs_the_same_items_from_both_judges():
    with pytest.raises(ValueError, match=re.escape(NOT_SAME_ITEMS.format(left=2, right=1))):
        cohen_kappa([1, 0], [1])


def test_a_bootstrap_interval_of_two_questions_is_worked_out_by_hand():
    # Efron & Tibshirani, "An Introduction to the Bootstrap" (1993), ch. 13: resampling
    # the scores (0, 1) gives the means 0, 0.5 and 1 with probabilities 1/4, 1/2, 1/4, so
    # the 2.5th and 97.5th percentiles are 0 and 1: the interval is [0, 1], where the t
    # interval would be 0.5 +- 12.706 * 0.7071 / 1.4142 = 0.5 +- 6.35.
    [ci] = bootstrap_cis([[0.0], [1.0]])
    assert (ci.mean, ci.lower, ci.upper) == (0.5, 0.0, 1.0)


def test_a_bootstrap_interval_is_seeded_and_a_constant_run_has_no_width():
    matrix = [[0.2, 0.5], [0.9, 0.5], [0.4, 0.5], [0.7, 0.5]]
    first, constant = bootstrap_cis(matrix, seed=3)
    assert bootstrap_cis(matrix, seed=3)[0] == first
    assert 0.2 <= first.lower < first.mean < first.upper <= 0.9
    assert (constant.lower, constant.upper) == (0.5, 0.5)


def scipy_interval(matrix: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """scipy.stats.bootstrap's percentile interval (Efron & Tibshirani, "An Introduction
    to the Bootstrap", 1993, chapter 13), as bootstrap_cis computed it before it was
    vectorised (batch=64, the bounds clipped to the observed scores)."""
    interval = sp_stats.bootstrap(
        (matrix,), np.mean, axis=0, vectorized=True, method="percentile", batch=64,
        n_resamples=BOOTSTRAP_RESAMPLES, random_state=np.random.default_rng(seed),
    ).confidence_interval
    low, high = matrix.min(axis=0), matrix.max(axis=0)
    return np.clip(interval.low, low, high), np.clip(interval.high, low, high)


@pytest.mark.parametrize("shape", [(2, 1), (7, 3), (40, 12), (300, 5)])
def test_bootstrap_intervals_are_scipys_on_the_same_resamples(shape):
    # The same generator calls draw the same resamples; only the rounding of the
    # resampled means (a matrix product here, a mean of gathered scores in scipy) differs.
    matrix = np.random.default_rng(sum(shape)).random(shape)
    matrix[:, 0] = np.round(matrix[:, 0], 1)  # ties between scores, as real scores have

    cis = bootstrap_cis(matrix, seed=11)

    low, high = scipy_interval(matrix, 11)
    np.testing.assert_allclose([ci.lower for ci in cis], low, rtol=0, atol=1e-12)
    np.testing.assert_allclose([ci.upper for ci in cis], high, rtol=0, atol=1e-12)
