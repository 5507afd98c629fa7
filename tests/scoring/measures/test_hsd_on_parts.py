"""The randomised Tukey HSD of a measure that is no mean over questions (HMR): each
question's answer (correctness and confidence) is permuted across runs and every run's
HMR recomputed. Checked against a hand-computed HMR and an exact test that enumerates
every permutation with the AC scorer itself, independently of the parts' algebra."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scoring.measures import JudgedAnswer, score_ac_run, score_ac_track
from scoring.measures.ac_parts import ACCURACY, HMR, R_O, R_U, calibration_parts
from scoring.measures.catalogue import RANKS_BY, significance_candidates
from scoring.measures.hsd import randomised_tukey_hsd
from scoring.recompute import snapshot_statistics

QIDS = ["Q1", "Q2", "Q3", "Q4"]
# Three runs' (correct, confidence) per question: small enough to enumerate the
# (3!)^4 = 1296 ways of permuting each question's answers across the runs.
RUNS = {
    "A": [(True, 90), (True, 60), (False, 30), (False, 0)],
    "B": [(True, 20), (False, 95), (True, 50), (False, 80)],
    "C": [(False, 70), (True, 100), (True, 10), (True, 40)],
}


def answers(cells: list[tuple[bool, int]]) -> dict[str, JudgedAnswer]:
    return {qid: JudgedAnswer(correct=c, confidence=p)
            for qid, (c, p) in zip(QIDS, cells, strict=True)}


def hmr_of(cells: list[tuple[bool, int]]) -> float:
    return score_ac_run(qids=QIDS, answers=answers(cells)).hmr


def test_hmr_from_the_sums_of_its_parts_by_hand():
    # NTCIR-19 R2C2 task definition (Sakai): O = sum of p over the incorrect answers,
    # U = sum of 1 - p over the correct ones, R_O = 1 - O/|I-|, R_U = 1 - U/|I+|,
    # HMR = 2 R_O R_U / (R_O + R_U). Run A: O = 0.3 + 0 = 0.3 over 2, R_O = 0.85;
    # U = 0.1 + 0.4 = 0.5 over 2, R_U = 0.75; HMR = 1.275 / 1.6 = 0.796875.
    correct = np.array([[1.0], [1.0], [0.0], [0.0]])
    confidence = np.array([[0.9], [0.6], [0.3], [0.0]])
    sums = calibration_parts(correct, confidence).sum(axis=1)

    assert R_O.of_sums(sums, 4)[0] == pytest.approx(0.85)
    assert R_U.of_sums(sums, 4)[0] == pytest.approx(0.75)
    assert HMR.of_sums(sums, 4)[0] == pytest.approx(0.796875)
    assert ACCURACY.of_sums(sums, 4)[0] == pytest.approx(0.5)
    assert hmr_of(RUNS["A"]) == pytest.approx(0.796875)


@pytest.mark.parametrize("cells", [
    [(True, 100)] * 4,  # I- empty: R_O = 1; U = 0: R_U = 1
    [(False, 100)] * 4,  # I+ empty: R_U = 1; O = 4: R_O = 0
    [(True, 0), (True, 0), (False, 100), (False, 100)],  # R_O = R_U = 0: HMR = 0
    *RUNS.values(),
])
def test_the_parts_give_what_the_scorer_gives(cells):
    scored = score_ac_run(qids=QIDS, answers=answers(cells))
    correct = np.array([[float(c)] for c, _ in cells])
    confidence = np.array([[p / 100] for _, p in cells])
    sums = calibration_parts(correct, confidence).sum(axis=1)

    for parts, value in ((HMR, scored.hmr), (R_O, scored.r_o), (R_U, scored.r_u),
                         (ACCURACY, scored.accuracy)):
        assert parts.of_sums(sums, 4)[0] == pytest.approx(value, abs=1e-12)


def exact_p_values() -> dict[tuple[str, str], float]:
    """Every permutation of every question's answers across the runs, each run's HMR
    from the AC scorer: p = the share whose range of HMRs reaches the pair's |difference|."""
    names = list(RUNS)
    observed = {name: hmr_of(cells) for name, cells in RUNS.items()}
    rows = [[RUNS[name][q] for name in names] for q in range(len(QIDS))]
    ranges = []
    for orders in itertools.product(itertools.permutations(range(len(names))),
                                    repeat=len(QIDS)):
        hmrs = [hmr_of([rows[q][order[j]] for q, order in enumerate(orders)])
                for j in range(len(names))]
        ranges.append(max(hmrs) - min(hmrs))
    return {(a, b): sum(r >= abs(observed[a] - observed[b]) - 1e-12 for r in ranges)
            / len(ranges) for a, b in itertools.combinations(names, 2)}


def test_the_p_values_agree_with_an_exact_enumeration():
    exact = exact_p_values()
    per_question = [score_ac_track(qids=QIDS, runs={n: answers(c)})[n].per_question()
                    for n, c in RUNS.items()]

    statistics = snapshot_statistics("ac", list(RUNS), QIDS, per_question,
                                     n_permutations=20000, seed=7)

    assert statistics.hsd_measure == "hmr" == RANKS_BY["ac"]
    assert statistics.measure == "nugget_precision"  # the CIs and ANOVA: a mean
    found = {(p.a, p.b): p for p in statistics.hsd}
    assert set(found) == set(exact)
    for pair, p in exact.items():
        # B = 20000: a p-value's standard error is at most 0.0035; allow five.
        assert found[pair].p_value == pytest.approx(p, abs=0.018), pair
        assert found[pair].difference == pytest.approx(hmr_of(RUNS[pair[0]])
                                                       - hmr_of(RUNS[pair[1]]))
    assert any(0.05 < p < 0.95 for p in exact.values())  # a case that tells them apart


def test_a_mean_measure_is_tested_as_before():
    # Accuracy through its parts, or as the mean of the per-question 'correct' column:
    # the same trials (one seed), the same p-values.
    correct = np.array([[float(c) for c, _ in RUNS[n]] for n in RUNS]).T
    confidence = np.array([[p / 100 for _, p in RUNS[n]] for n in RUNS]).T
    by_parts = randomised_tukey_hsd(ACCURACY.matrices({"correct": correct,
                                                       "confidence": confidence}),
                                    n_permutations=3000, seed=1,
                                    statistic=ACCURACY.statistic(len(QIDS)))
    as_mean = randomised_tukey_hsd(correct, n_permutations=3000, seed=1)

    np.testing.assert_allclose(by_parts.p_values, as_mean.p_values)
    np.testing.assert_allclose(by_parts.means, as_mean.means)


def test_the_organisers_picks_are_tested_beside_the_ranking_measure():
    per_question = [score_ac_track(qids=QIDS, runs={n: answers(c)})[n].per_question()
                    for n, c in RUNS.items()]

    statistics = snapshot_statistics("ac", list(RUNS), QIDS, per_question,
                                     n_permutations=500, seed=7,
                                     tested=["hmr", "nugget_precision", "accuracy"])

    assert list(statistics.tests()) == ["hmr", "nugget_precision", "accuracy"]
    assert statistics.as_json()["hsd_measure"] == "hmr"
    assert set(statistics.as_json()["hsd_more"]) == {"nugget_precision", "accuracy"}
    assert "ece" not in significance_candidates("ac")  # binned: not from per-question sums
