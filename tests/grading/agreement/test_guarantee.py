"""The guarantee's threshold on hand-computed cases: fixed-sequence testing of the judge's
confidence with a one-sided exact binomial test ("Trust or Escalate", Jung, Brahman and
Choi, ICLR 2025, section 2.3), and the Clopper-Pearson interval (Clopper and Pearson 1934)."""

from __future__ import annotations

from math import comb

import pytest

from grading.agreement.guarantee import (
    choose_threshold,
    clopper_pearson,
    disagreement_p_value,
    smallest_passing_sample,
)

TARGET, RISK = 0.9, 0.1


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Bin(n, p), summed term by term."""
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_the_fewest_labels_that_can_show_a_target_all_agree_and_target_to_the_n_is_risk() -> None:
    # 0.9**21 = 0.109 > 0.1 >= 0.9**22 = 0.098; 0.95**58 = 0.051 > 0.05 >= 0.95**59 = 0.048.
    assert smallest_passing_sample(0.9, 0.1) == 22
    assert smallest_passing_sample(0.95, 0.05) == 59


def test_the_p_value_is_the_binomial_tail_at_the_disagreement_the_target_allows() -> None:
    assert disagreement_p_value(30, 0, TARGET) == pytest.approx(0.9**30)
    assert disagreement_p_value(40, 5, TARGET) == pytest.approx(binomial_cdf(5, 40, 0.1))


def test_when_every_label_agrees_the_lowest_confidence_with_enough_labels_is_chosen() -> None:
    verdicts = [(1.0, True)] * 10 + [(0.9, True)] * 6 + [(0.8, True)] * 6
    chosen = choose_threshold(verdicts, target=TARGET, risk=RISK)
    # 1.0 and 0.9 hold 10 and 16 labels, too few for any outcome to pass: not tested.
    assert [(t.threshold, t.n, t.disagreements) for t in chosen.tests] == [(0.8, 22, 0)]
    assert chosen.tests[0].p_value == pytest.approx(0.9**22)  # 0.0985 <= 0.1
    assert chosen.value == 0.8


def test_where_agreement_falls_at_low_confidence_the_threshold_stops_above_it() -> None:
    verdicts = [(0.95, True)] * 30 + [(0.6, True)] * 5 + [(0.6, False)] * 5
    chosen = choose_threshold(verdicts, target=TARGET, risk=RISK)
    first, second = chosen.tests
    assert (first.n, first.disagreements, first.passed) == (30, 0, True)  # 0.9**30 = 0.042
    assert (second.n, second.disagreements, second.passed) == (40, 5, False)
    assert second.p_value == pytest.approx(binomial_cdf(5, 40, 0.1))  # 0.629 > 0.1
    assert chosen.value == 0.95


def test_testing_stops_at_the_first_failure_even_where_a_lower_threshold_would_pass() -> None:
    # 25 at 0.99 with 3 disagreements fail (P(Bin(25, .1) <= 3) = 0.764); all 125 with the
    # same 3 would pass (P(Bin(125, .1) <= 3) < 0.001), but testing has stopped.
    verdicts = [(0.99, True)] * 22 + [(0.99, False)] * 3 + [(0.5, True)] * 100
    chosen = choose_threshold(verdicts, target=TARGET, risk=RISK)
    assert binomial_cdf(3, 125, 0.1) < RISK
    assert [(t.n, t.passed) for t in chosen.tests] == [(25, False)]
    assert chosen.value is None
    assert chosen.reason.startswith(
        "the 25 sampled judgments at confidence >= 0.990 (the highest threshold with 22 "
        "labels or more at or above it) disagree with people 3 time(s): too many to show "
        "0.9 agreement at risk 0.1")


def test_a_sample_too_small_for_the_target_accepts_nothing_and_says_how_many_more() -> None:
    chosen = choose_threshold([(0.99, True)] * 21, target=TARGET, risk=RISK)
    assert chosen.value is None and chosen.tests == ()
    assert chosen.reason == ("sample too small for 0.9 agreement at risk 0.1: need >= 22 "
                             "agreeing labelled items above a threshold, 21 labelled")
    assert chosen.more_labels == 1


def test_an_uninformative_confidence_accepts_nothing_and_no_sample_size_would_help() -> None:
    # Every judgment equally sure and 36 of 40 right: 0.9 is no better than the target.
    chosen = choose_threshold([(0.7, True)] * 36 + [(0.7, False)] * 4, target=TARGET, risk=RISK)
    assert chosen.value is None
    assert chosen.tests[0].p_value == pytest.approx(binomial_cdf(4, 40, 0.1))
    assert "the same for every sampled judgment" in chosen.reason
    assert "no sample size would" in chosen.reason and chosen.more_labels is None


def test_more_labels_is_the_fewest_that_would_pass_at_the_same_rate_of_disagreement() -> None:
    # 1 in 30 disagree: P(Bin(30, .1) <= 1) = 0.184 fails; at that rate (floor(n / 30)
    # disagreements) the smallest n that passes is found by the definition.
    chosen = choose_threshold([(0.8, True)] * 29 + [(0.8, False)], target=TARGET, risk=RISK)
    assert chosen.value is None and chosen.more_labels is not None
    size = 30 + chosen.more_labels
    assert binomial_cdf(size // 30, size, 0.1) <= RISK
    assert all(binomial_cdf(n // 30, n, 0.1) > RISK for n in range(30, size))


@pytest.mark.parametrize(("agreed", "n", "low", "high"), [
    (9, 10, 0.5550, 0.9975),  # the exact 95% interval of 9/10, as tabulated
    (0, 10, 0.0, 0.3085),
    (4, 5, 0.2836, 0.9949),
])
def test_the_agreement_interval_is_clopper_pearsons(agreed: int, n: int, low: float,
                                                     high: float) -> None:
    assert clopper_pearson(agreed, n) == pytest.approx((low, high), abs=5e-5)
