"""Randomised Tukey HSD over a topic-by-run score matrix, or over per-topic parts
(Carterette, ACM TOIS 30(1), 2012; Sakai, Springer 2018, chapter 4). How the trials are
drawn, and why the p-values repeat: docs/statistics.md, "Randomised Tukey HSD"."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

DEFAULT_PERMUTATIONS = 5000
DEFAULT_SEED = 0
# Cells (trials x topics x runs) permuted in one step: a step's keys, cells and scores
# (about 2 MB) stay in a core's cache through the sort, the gather and the sums; each
# thread allocates its buffers once per call.
CHUNK_CELLS = 2**17
# Trials that draw from one random stream: the unit of work a thread takes. The streams
# are spawned from the seed, so the p-values do not depend on the number of threads.
TRIALS_PER_STREAM = 50
# Runs are numbered in a key's low bits: up to 2**8 runs in 32-bit keys (24 random bits
# left, so that a row with a tie to redraw stays rare), up to 2**16 in 64-bit ones.
SHORT_KEY_INDEX_BITS = 8
MAX_INDEX_BITS = 16
# Run means of a permuted matrix are summed in another order than the observed ones;
# differences this small (relative to the largest score) count as equal.
RELATIVE_TOLERANCE = 1e-9

BAD_MATRIX = "a score matrix needs at least one topic and two runs, got shape {shape}"
NOT_FINITE = "scores must be finite numbers"
TOO_LARGE = "at most 65536 runs are supported, got {runs}"
BAD_PERMUTATIONS = "the number of permutations must be a positive integer, got {value!r}"
BAD_NAMES = "expected {expected} run names, got {got}"
UNKNOWN_RUN = "no run named {name!r}"

FloatArray = npt.NDArray[np.float64]
#: A run-level measure from its parts' sums over the topics: parts x ... x runs sums in,
#: ... x runs values out.
SumStatistic = Callable[[FloatArray], FloatArray]


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
    statistic: SumStatistic | None = None,
) -> TukeyHsdResult:
    """HSD p-values for every pair of runs (columns of `scores`, or parts x topics x runs with
    `statistic`): trials whose range reaches |difference|, over B, no +1 (as Sakai's). An int
    seed repeats bit for bit whatever `workers` (docs/statistics.md)."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != (2 if statistic is None else 3) or x.shape[-2] < 1 or x.shape[-1] < 2:
        raise ValueError(BAD_MATRIX.format(shape=x.shape))
    parts = x if statistic is not None else x[None]
    if not np.all(np.isfinite(x)):
        raise ValueError(NOT_FINITE)
    _, n_topics, n_runs = parts.shape
    names = tuple(run_names) if run_names is not None else tuple(str(j) for j in range(n_runs))
    if len(names) != n_runs:
        raise ValueError(BAD_NAMES.format(expected=n_runs, got=len(names)))
    if (
        isinstance(n_permutations, bool)
        or not isinstance(n_permutations, int)
        or n_permutations < 1
    ):
        raise ValueError(BAD_PERMUTATIONS.format(value=n_permutations))

    ranges = _permutation_ranges(parts, n_permutations, seed, workers, statistic)
    if statistic is None:
        # Compare in "sum over topics" units, the units the trials were computed in.
        values = x.sum(axis=0)
        tolerance = RELATIVE_TOLERANCE * n_topics * max(1.0, float(np.abs(x).max()))
        means = values / n_topics
    else:
        values = means = np.asarray(statistic(parts.sum(axis=1)), dtype=np.float64)
        tolerance = RELATIVE_TOLERANCE * max(1.0, float(np.abs(values).max()))
    observed = np.abs(values[:, None] - values[None, :])
    ranges.sort()
    reached = n_permutations - np.searchsorted(ranges, observed - tolerance, side="left")
    p_values = reached / n_permutations
    np.fill_diagonal(p_values, 1.0)
    means.setflags(write=False)
    p_values.setflags(write=False)
    return TukeyHsdResult(names, means, p_values, n_permutations)


def _permutation_ranges(
    x: FloatArray, n_permutations: int, seed: int | np.random.Generator, workers: int | None,
    statistic: SumStatistic | None,
) -> FloatArray:
    """max - min over the runs for each of `n_permutations` trials: of the run sums (not
    means) of the one part, or of `statistic` of the parts' sums."""
    trials = _Trials.of(x, n_permutations)
    if isinstance(seed, np.random.Generator):
        streams = [g.bit_generator for g in seed.spawn(trials.n_streams)]
    else:
        # SFC64: numpy's fastest generator (twice PCG64's speed here, and random bits are
        # the largest cost of a trial); it passes BigCrush and PractRand like PCG64.
        streams = [np.random.SFC64(s)
                   for s in np.random.SeedSequence(seed).spawn(trials.n_streams)]
    ranges = np.empty(n_permutations, dtype=np.float64)
    workspaces = threading.local()

    def run_stream(stream: int) -> None:
        if not hasattr(workspaces, "scores"):
            workspaces.scores = np.empty((trials.n_parts, trials.rows_per_step, trials.n_runs))
            workspaces.neighbours = np.empty((trials.rows_per_step, max(1, trials.n_runs - 1)),
                                             dtype=trials.key_type)
        first = stream * TRIALS_PER_STREAM
        last = min(first + TRIALS_PER_STREAM, n_permutations)
        for start in range(first, last, trials.per_step):
            size = min(trials.per_step, last - start)
            run_sums = trials.run_sums(streams[stream], size, workspaces)
            values = run_sums[0] if statistic is None else statistic(run_sums)
            ranges[start : start + size] = values.max(axis=1) - values.min(axis=1)

    n_workers = min(trials.n_streams, workers if workers is not None else _default_workers())
    if n_workers <= 1:
        for stream in range(trials.n_streams):
            run_stream(stream)
    else:
        with ThreadPoolExecutor(max_workers=n_workers) as pool:
            list(pool.map(run_stream, range(trials.n_streams)))
    return ranges


@dataclass(frozen=True)
class _Trials:
    """How one test's trials are drawn, `per_step` at a time: each row gets random keys whose
    low `index_bits` hold the run's column, so one sort gives the order and the column."""

    x: FloatArray  # parts x topics x runs
    n_parts: int
    n_topics: int
    n_runs: int
    key_type: type[np.unsignedinteger[Any]]
    index_bits: int
    per_step: int
    n_streams: int
    # each row's offset in the flattened matrix: its topic times the number of runs
    row_offsets: npt.NDArray[np.unsignedinteger[Any]]

    @classmethod
    def of(cls, x: FloatArray, n_permutations: int) -> _Trials:
        n_parts, n_topics, n_runs = x.shape
        index_bits = max(1, (n_runs - 1).bit_length())
        if index_bits > MAX_INDEX_BITS:
            raise ValueError(TOO_LARGE.format(runs=n_runs))
        short = index_bits <= SHORT_KEY_INDEX_BITS and n_topics * n_runs < 2**32
        key_type = np.uint32 if short else np.uint64
        per_step = max(1, min(n_permutations, TRIALS_PER_STREAM,
                              CHUNK_CELLS // (n_topics * n_runs)))
        topics = np.arange(per_step * n_topics) % n_topics
        return cls(
            x=np.ascontiguousarray(x),
            n_parts=n_parts,
            n_topics=n_topics,
            n_runs=n_runs,
            key_type=key_type,
            index_bits=index_bits,
            per_step=per_step,
            n_streams=math.ceil(n_permutations / TRIALS_PER_STREAM),
            row_offsets=(topics * n_runs).astype(key_type)[:, None],
        )

    @property
    def rows_per_step(self) -> int:
        return self.per_step * self.n_topics

    def run_sums(self, stream: np.random.BitGenerator, size: int,
                 workspace: threading.local) -> FloatArray:
        """part x trial x run: the run sums of `size` trials, every row permuted at random
        (a row's parts alike)."""
        rows = size * self.n_topics
        keys = self._random_keys(stream, rows)
        keys.sort(axis=1)
        for row in self._tied_rows(keys, workspace.neighbours[:rows]):
            keys[row] = self._untied_row(stream)
        # The low bits of a sorted key are the column whose score lands at its place;
        # the flat cell is that column plus the row's offset.
        np.bitwise_and(keys, self._low_bits, out=keys)
        np.add(keys, self.row_offsets[:rows], out=keys)
        result = np.empty((self.n_parts, size, self.n_runs))
        for part in range(self.n_parts):
            scores = workspace.scores[part, :rows]
            # mode="clip": the cells are in range by construction, and numpy's default
            # bounds check costs more than the gather itself
            np.take(self.x[part].ravel(), keys, out=scores, mode="clip")
            scores.reshape(size, self.n_topics, self.n_runs).sum(axis=1, out=result[part])
        return result

    @property
    def _low_bits(self) -> np.unsignedinteger[Any]:
        return self.key_type((1 << self.index_bits) - 1)

    def _random_keys(self, stream: np.random.BitGenerator, rows: int) -> npt.NDArray[Any]:
        n_keys = rows * self.n_runs
        per_word = 8 // np.dtype(self.key_type).itemsize
        words = stream.random_raw(-(-n_keys // per_word))
        keys = words.view(self.key_type)[:n_keys].reshape(rows, self.n_runs)
        np.bitwise_and(keys, ~self._low_bits, out=keys)
        np.bitwise_or(keys, np.arange(self.n_runs, dtype=self.key_type), out=keys)
        return keys

    def _tied_rows(self, keys: npt.NDArray[Any], neighbours: npt.NDArray[Any]
                   ) -> npt.NDArray[np.intp]:
        """Rows of sorted keys where two keys share their random bits (neighbours' XOR below
        2**index_bits): their order would be the columns', so the row is drawn again."""
        if keys.shape[1] < 2:
            return np.empty(0, dtype=np.intp)
        np.bitwise_xor(keys[:, 1:], keys[:, :-1], out=neighbours)
        if neighbours.min() > self._low_bits:
            return np.empty(0, dtype=np.intp)
        return np.flatnonzero(neighbours.min(axis=1) <= self._low_bits)

    def _untied_row(self, stream: np.random.BitGenerator) -> npt.NDArray[Any]:
        while True:
            row = self._random_keys(stream, 1)
            row.sort(axis=1)
            if self._tied_rows(row, np.empty((1, self.n_runs - 1), self.key_type)).size == 0:
                return row[0]


def _default_workers() -> int:
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(4, available))
