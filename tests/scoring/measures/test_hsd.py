"""Randomised Tukey HSD (Carterette, TOIS 2012; Sakai, Laboratory Experiments in IR, 2018)."""

from __future__ import annotations

import itertools
import re
import threading
from collections import Counter

import numpy as np
import pytest

from scoring.measures import hsd
from scoring.measures.hsd import (
    BAD_MATRIX,
    BAD_NAMES,
    BAD_PERMUTATIONS,
    NOT_FINITE,
    TOO_LARGE,
    randomised_tukey_hsd,
)


def exact_hsd_p_values(x: np.ndarray) -> np.ndarray:
    """Every combination of row permutations, equally likely: the exact p-values the
    randomised test estimates."""
    n, m = x.shape
    observed = np.abs(x.mean(axis=0)[:, None] - x.mean(axis=0)[None, :])
    rows = [[x[t, list(p)] for p in itertools.permutations(range(m))] for t in range(n)]
    ranges = np.array(
        [np.ptp(np.mean(combination, axis=0)) for combination in itertools.product(*rows)]
    )
    return (ranges[None, None, :] >= observed[:, :, None] - 1e-12).mean(axis=2)


def test_identical_runs_are_never_significantly_different():
    x = np.array([[0.2, 0.2], [0.5, 0.5], [0.9, 0.9]])

    assert randomised_tukey_hsd(x, n_permutations=500).p_value("0", "1") == 1.0


def test_a_run_better_by_one_on_three_topics_has_p_one_quarter():
    # Two runs: permuting a row swaps its two scores with probability 1/2. The range of
    # the means reaches the observed 1 only when all three rows swap alike: 2/8.
    x = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])

    result = randomised_tukey_hsd(x, n_permutations=5000, seed=1)

    assert result.p_value("0", "1") == pytest.approx(0.25, abs=0.03)  # 5 standard errors


def test_a_run_better_on_every_one_of_twenty_topics_is_significant():
    # All 20 rows must swap alike to reach the observed range: p = 2 / 2^20.
    x = np.tile([0.6, 0.4], (20, 1)) + np.linspace(0, 0.3, 20)[:, None]

    assert randomised_tukey_hsd(x, n_permutations=5000).p_value("0", "1") < 0.001


def test_p_values_estimate_the_exact_permutation_distribution():
    x = np.array([[0.1, 0.5, 0.9], [0.2, 0.6, 0.8], [0.3, 0.4, 1.0]])
    exact = exact_hsd_p_values(x)  # (3!)^3 = 216 equally likely outcomes

    result = randomised_tukey_hsd(x, n_permutations=5000, seed=7)

    # 5000 trials: a standard error of at most 0.0071; allow 5 of them.
    np.testing.assert_allclose(result.p_values, exact, atol=0.036)
    assert result.p_value("0", "2") < result.p_value("1", "2") < result.p_value("0", "1")


def test_the_same_seed_gives_the_same_p_values():
    x = np.random.default_rng(0).random((10, 4))

    first = randomised_tukey_hsd(x, n_permutations=2000, seed=42)
    again = randomised_tukey_hsd(x, n_permutations=2000, seed=42)
    other = randomised_tukey_hsd(x, n_permutations=2000, seed=43)

    assert np.array_equal(first.p_values, again.p_values)
    assert not np.array_equal(first.p_values, other.p_values)


def test_a_seeded_generator_gives_repeatable_p_values():
    x = np.random.default_rng(0).random((10, 4))

    first = randomised_tukey_hsd(x, n_permutations=500, seed=np.random.default_rng(5))
    again = randomised_tukey_hsd(x, n_permutations=500, seed=np.random.default_rng(5))

    assert np.array_equal(first.p_values, again.p_values)


def test_the_result_does_not_depend_on_chunking_threads(monkeypatch):
    monkeypatch.setattr(hsd, "CHUNK_CELLS", 40 * 4 * 7)  # 7 trials a chunk, many chunks
    x = np.random.default_rng(0).random((40, 4))

    alone = randomised_tukey_hsd(x, n_permutations=300, seed=3, workers=1)
    shared = randomised_tukey_hsd(x, n_permutations=300, seed=3, workers=3)

    assert np.array_equal(alone.p_values, shared.p_values)


def test_every_permutation_keeps_each_topics_scores():
    # Each trial only reorders a topic's row, so the run sums of every trial add up to
    # the grand total. Rows [0, 1], [0, 10], [0, 100] (grand total 111): run A's sum s is
    # a sum of one score per row, s in {0, 1, 10, 11, 100, 101, 110, 111}, run B's is
    # 111 - s, and the range |2s - 111| is one of 89, 91, 109, 111, each with chance 1/4.
    # A score taken from another row, or counted twice, gives any other number.
    x = np.array([[0.0, 1.0], [0.0, 10.0], [0.0, 100.0]])

    ranges = hsd._permutation_ranges(x[None], 400, 0, 1, None)

    # All four show up: missing one in 400 trials has chance 4 * (3/4)^400 < 1e-49.
    assert set(ranges.tolist()) == {89.0, 91.0, 109.0, 111.0}


def test_every_permutation_is_one_of_the_possible_reorderings():
    # With scores 1, 10, 100, ... (one power of ten per cell) the run sums say which
    # cell went where; every trial's range must be one that some reordering of each
    # row gives, enumerated here over all (3!)^3 = 216 of them.
    x = (10.0 ** np.arange(9)).reshape(3, 3).astype(np.float64)
    possible = {
        float(np.ptp(np.sum(rows, axis=0)))
        for rows in itertools.product(*[list(itertools.permutations(row)) for row in x])
    }

    ranges = hsd._permutation_ranges(x[None], 2000, 0, 1, None)

    assert set(ranges.tolist()) <= possible
    assert np.all(ranges <= (x.max(axis=1) - x.min(axis=1)).sum())


def test_pairs_list_every_pair_once_with_names():
    x = np.array([[0.3, 0.2, 0.1], [0.35, 0.25, 0.05]])

    pairs = randomised_tukey_hsd(x, run_names=["A", "B", "C"], n_permutations=100).pairs()

    assert [(p.run_a, p.run_b) for p in pairs] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert pairs[1].difference == pytest.approx(0.325 - 0.075)


@pytest.mark.parametrize(
    ("scores", "kwargs", "message"),
    [
        ([[0.1], [0.2]], {}, BAD_MATRIX.format(shape=(2, 1))),
        ([[0.1, np.nan]], {}, NOT_FINITE),
        ([[0.1, 0.2]], {"n_permutations": 0}, BAD_PERMUTATIONS.format(value=0)),
        ([[0.1, 0.2]], {"run_names": ["A"]}, BAD_NAMES.format(expected=2, got=1)),
    ],
)
def test_it_rejects_bad_input(scores, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        randomised_tukey_hsd(scores, **kwargs)


class FirstDrawTies:
    """A bit generator whose first draw is all zeros (every key of every row ties),
    then the words of a seeded SFC64."""

    def __init__(self, seed: int) -> None:
        self.words = np.random.SFC64(seed)
        self.first = True

    def random_raw(self, size: int) -> np.ndarray:
        if self.first:
            self.first = False
            return np.zeros(size, dtype=np.uint64)
        return self.words.random_raw(size)


def arrangements(x: np.ndarray, streams) -> list[tuple[float, ...]]:
    """One trial per stream on a one-topic matrix: its run sums are the permuted row."""
    trials = hsd._Trials.of(x[None], 1)
    workspace = threading.local()
    workspace.scores = np.empty((1, trials.rows_per_step, x.shape[1]))
    workspace.neighbours = np.empty((trials.rows_per_step, x.shape[1] - 1), trials.key_type)
    return [tuple(trials.run_sums(stream, 1, workspace)[0, 0]) for stream in streams]


@pytest.mark.parametrize("make_stream", [np.random.SFC64, FirstDrawTies],
                         ids=["random keys", "tied keys drawn again"])
def test_each_row_is_permuted_uniformly(make_stream):
    # The randomised HSD permutes each topic's scores uniformly at random (Carterette,
    # TOIS 2012). A one-topic matrix [1, 10, 100]: a trial's run sums are the row in its
    # drawn order, each of the 3! = 6 orders with chance 1/6. 6000 trials: each count is
    # 1000 with a standard error of sqrt(6000 * 1/6 * 5/6) = 28.9; allow 5 of them. Keys
    # that tie (FirstDrawTies: all of them) would keep the row's own order every time
    # unless the row is drawn again.
    x = np.array([[1.0, 10.0, 100.0]])

    counts = Counter(arrangements(x, [make_stream(seed) for seed in range(6000)]))

    assert set(counts) == set(itertools.permutations((1.0, 10.0, 100.0)))
    assert all(abs(count - 1000) < 5 * 28.9 for count in counts.values()), counts


def test_more_runs_than_32_bit_keys_hold_are_permuted_too():
    # 300 runs need 9 index bits: 64-bit keys. Rows [0, ..., 0, 1] and [0, ..., 0, 1000]:
    # every trial's run sums are a reordering of one row plus one of the other, so they
    # hold exactly one 1 and one 1000 (or one 1001), zeros elsewhere.
    x = np.zeros((2, 300))
    x[0, -1], x[1, -1] = 1.0, 1000.0

    ranges = hsd._permutation_ranges(x[None], 200, 0, 1, None)

    assert hsd._Trials.of(x[None], 200).key_type is np.uint64
    assert set(ranges.tolist()) <= {1000.0, 1001.0}
    # the two land on the same run with chance 1/300: in about one trial of 300
    assert (ranges == 1000.0).sum() > 150


def test_it_refuses_more_runs_than_its_keys_can_number():
    with pytest.raises(ValueError, match=re.escape(TOO_LARGE.format(runs=2**16 + 1))):
        randomised_tukey_hsd(np.zeros((1, 2**16 + 1)), n_permutations=1)
