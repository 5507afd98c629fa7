"""Randomised Tukey HSD test over a topic-by-run score matrix (the NTCIR practice).

Source: Carterette, "Multiple testing in statistical analysis of systems-based
information retrieval experiments", ACM TOIS 30(1), 2012 (the randomised version of
Tukey's HSD); Sakai, "Laboratory Experiments in Information Retrieval", Springer 2018,
chapter 4 (multiple comparison procedures; the randomised Tukey HSD with B = 5000 as
used at NTCIR).

For each of B trials, every topic's row of scores is permuted across the runs
independently, and the range (max - min) of the run means is recorded. The p-value of
a pair of runs is the fraction of trials whose range reaches the pair's observed
absolute difference in means; comparing with the maximum over all runs is what controls
the familywise error rate.

Speed: trials are processed in chunks, all permutations of a chunk at once. A random
permutation of each row is drawn by sorting random keys; each key is a random double's
bit pattern (positive doubles order like their bits) whose low bits are replaced by the
flat index of a cell, so one in-place integer sort yields both the random order and the
cell to gather, with no argsort and no per-chunk allocation. Keys that agree in all but
those low bits are ordered by index instead of at random: with 1,000 x 100 cells (17
index bits) that happens to about one row in seven million and does not matter. Chunks
run on a small thread pool (numpy releases the GIL); each chunk draws from its own
generator spawned from the seed, so the result does not depend on the number of threads.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_PERMUTATIONS = 5000
DEFAULT_SEED = 0
# Cells (trials x topics x runs) per chunk: each thread allocates two buffers of this
# many doubles (about 20 MB each) once per call and reuses them for every chunk; fresh
# pages are expensive, so they are not allocated per chunk.
CHUNK_CELLS = 2_500_000
# Index bits are stolen from the low end of a 52-bit mantissa; past 24 of them the
# random part gets short enough for ties to matter.
MAX_INDEX_BITS = 24
# Run means of a permuted matrix are summed in another order than the observed ones;
# differences this small (relative to the largest score) count as equal.
RELATIVE_TOLERANCE = 1e-9

BAD_MATRIX = "a score matrix needs at least one topic and two runs, got shape {shape}"
NOT_FINITE = "scores must be finite numbers"
TOO_LARGE = "at most 2**24 topic-run cells are supported, got {cells}"
BAD_PERMUTATIONS = "the number of permutations must be a positive integer, got {value!r}"
BAD_NAMES = "expected {expected} run names, got {got}"
UNKNOWN_RUN = "no run named {name!r}"

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PairwiseComparison:
    """One pair of runs: difference in mean scores (a - b) and its HSD p-value."""

    run_a: str
    run_b: str
    difference: float
    p_value: float


@dataclass(frozen=True, eq=False)
class TukeyHsdResult:
    """Run means and the symmetric matrix of HSD p-values (diagonal 1)."""

    run_names: tuple[str, ...]
    means: FloatArray
    p_values: FloatArray
    n_permutations: int

    def p_value(self, run_a: str, run_b: str) -> float:
        return float(self.p_values[self._index(run_a), self._index(run_b)])

    def pairs(self) -> list[PairwiseComparison]:
        """Every pair once, in run order (a before b)."""
        names, m = self.run_names, len(self.run_names)
        return [
            PairwiseComparison(
                names[i],
                names[j],
                float(self.means[i] - self.means[j]),
                float(self.p_values[i, j]),
            )
            for i in range(m)
            for j in range(i + 1, m)
        ]

    def _index(self, name: str) -> int:
        try:
            return self.run_names.index(name)
        except ValueError:
            raise KeyError(UNKNOWN_RUN.format(name=name)) from None


def randomised_tukey_hsd(
    scores: npt.ArrayLike,
    *,
    run_names: Sequence[str] | None = None,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    seed: int | np.random.Generator = DEFAULT_SEED,
    workers: int | None = None,
) -> TukeyHsdResult:
    """Randomised Tukey HSD p-values for every pair of runs (columns of `scores`).

    `scores` is topics x runs. With an int seed the result is repeatable bit for bit;
    with a Generator, the trials draw from generators it spawns. `workers` threads
    (default: up to 4, no more than the CPUs available) share the chunks.
    p = (number of trials with range >= |observed difference|) / B, as in Sakai's
    implementation (no +1 correction).
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(BAD_MATRIX.format(shape=x.shape))
    if not np.all(np.isfinite(x)):
        raise ValueError(NOT_FINITE)
    n_topics, n_runs = x.shape
    names = tuple(run_names) if run_names is not None else tuple(str(j) for j in range(n_runs))
    if len(names) != n_runs:
        raise ValueError(BAD_NAMES.format(expected=n_runs, got=len(names)))
    if (
        isinstance(n_permutations, bool)
        or not isinstance(n_permutations, int)
        or n_permutations < 1
    ):
        raise ValueError(BAD_PERMUTATIONS.format(value=n_permutations))

    ranges = _permutation_ranges(x, n_permutations, seed, workers)
    # Compare in "sum over topics" units, the units the trials were computed in.
    sums = x.sum(axis=0)
    tolerance = RELATIVE_TOLERANCE * n_topics * max(1.0, float(np.abs(x).max()))
    observed = np.abs(sums[:, None] - sums[None, :])
    ranges.sort()
    reached = n_permutations - np.searchsorted(ranges, observed - tolerance, side="left")
    p_values = reached / n_permutations
    np.fill_diagonal(p_values, 1.0)
    means = sums / n_topics
    means.setflags(write=False)
    p_values.setflags(write=False)
    return TukeyHsdResult(names, means, p_values, n_permutations)


def _permutation_ranges(
    x: FloatArray, n_permutations: int, seed: int | np.random.Generator, workers: int | None
) -> FloatArray:
    """max - min of the run sums (not means) for each of `n_permutations` trials."""
    n_topics, n_runs = x.shape
    cells = n_topics * n_runs
    index_bits = max(1, (cells - 1).bit_length())
    if index_bits > MAX_INDEX_BITS:
        raise ValueError(TOO_LARGE.format(cells=cells))
    per_chunk = max(1, min(n_permutations, CHUNK_CELLS // cells))
    n_chunks = math.ceil(n_permutations / per_chunk)
    if isinstance(seed, np.random.Generator):
        generators = seed.spawn(n_chunks)
    else:
        generators = [
            np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n_chunks)
        ]

    mask = np.uint64((1 << index_bits) - 1)
    not_mask = ~mask
    # flat cell index of every (trial, topic, run) slot of a chunk, repeated per trial
    cell_index = np.tile(
        np.arange(cells, dtype=np.uint64).reshape(n_topics, n_runs), (per_chunk, 1)
    )
    flat_scores = np.ascontiguousarray(x).ravel()
    ranges = np.empty(n_permutations, dtype=np.float64)
    buffers = threading.local()

    def run_chunk(chunk: int) -> None:
        start = chunk * per_chunk
        size = min(per_chunk, n_permutations - start)
        rows = size * n_topics
        if not hasattr(buffers, "keys"):
            buffers.keys = np.empty((per_chunk * n_topics, n_runs), dtype=np.float64)
            buffers.gathered = np.empty((per_chunk * n_topics, n_runs), dtype=np.float64)
        random = buffers.keys[:rows]
        gathered = buffers.gathered[:rows]
        keys = random.view(np.uint64)
        generators[chunk].random(out=random)
        np.bitwise_and(keys, not_mask, out=keys)
        np.bitwise_or(keys, cell_index[:rows], out=keys)
        keys.sort(axis=1)
        np.bitwise_and(keys, mask, out=keys)
        np.take(flat_scores, keys.view(np.intp), out=gathered)
        run_sums = gathered.reshape(size, n_topics, n_runs).sum(axis=1)
        ranges[start : start + size] = run_sums.max(axis=1) - run_sums.min(axis=1)

    n_workers = min(n_chunks, workers if workers is not None else _default_workers())
    if n_workers <= 1:
        for chunk in range(n_chunks):
            run_chunk(chunk)
    else:
        with ThreadPoolExecutor(max_workers=n_workers) as pool:
            list(pool.map(run_chunk, range(n_chunks)))
    return ranges


def _default_workers() -> int:
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(4, available))
