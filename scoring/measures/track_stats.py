"""A track snapshot's statistics on its question x run matrices, never run by run: a
bootstrap interval per run and measure, the ANOVA of the statistics measure and each
tested measure's randomised Tukey HSD (docs/statistics.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from .hsd import SumStatistic, TukeyHsdResult, randomised_tukey_hsd
from .stats import FloatArray, MeanCI, TwoWayAnova, bootstrap_cis, two_way_anova


@dataclass(frozen=True)
class HsdInput:
    """What one randomised Tukey HSD runs on: a question x run matrix of a mean measure,
    or parts x question x run and the measure from the parts' sums."""

    scores: FloatArray
    statistic: SumStatistic | None = None


@dataclass(frozen=True)
class TrackStatistics:
    """`intervals`: measure -> one interval per run (in run order), when there are at
    least two questions; `hsd` (measure -> result) when there are two runs; `anova`
    when both."""

    intervals: dict[str, list[MeanCI]]
    hsd: dict[str, TukeyHsdResult]
    anova: TwoWayAnova | None


def question_matrix(per_question: Sequence[Mapping[str, float]], qids: Sequence[str]
                    ) -> FloatArray:
    """question x run matrix of one measure from each run's qid -> value (0 for a
    question a run has no value for), each column read in C (`map`)."""
    matrix = np.zeros((len(qids), len(per_question)), dtype=np.float64)
    for column, values in enumerate(per_question):
        matrix[:, column] = np.fromiter(map(values.get, qids, repeat(0.0)),
                                        dtype=np.float64, count=len(qids))
    return matrix


def track_statistics(
    matrices: Mapping[str, FloatArray],
    *,
    main: str,
    run_names: Sequence[str],
    n_permutations: int,
    seed: int,
    tests: Mapping[str, HsdInput] | None = None,
) -> TrackStatistics:
    """Intervals for every measure of `matrices` (columns in `run_names` order), the ANOVA of
    `main`, and an HSD of each of `tests` (of `main` by default): one bootstrap over the
    side-by-side matrices, and every test seeded with the same `seed`."""
    n_questions, n_runs = matrices[main].shape
    intervals: dict[str, list[MeanCI]] = {}
    if n_questions >= 2 and n_runs >= 1:
        keys = list(matrices)
        cis = bootstrap_cis(np.hstack([matrices[key] for key in keys]), seed=seed)
        intervals = {key: cis[i * n_runs : (i + 1) * n_runs] for i, key in enumerate(keys)}
    hsd: dict[str, TukeyHsdResult] = {}
    if n_runs >= 2:
        for key, test in (tests if tests is not None else {main: HsdInput(matrices[main])}).items():
            hsd[key] = randomised_tukey_hsd(test.scores, run_names=run_names,
                                            n_permutations=n_permutations, seed=seed,
                                            statistic=test.statistic)
    anova = two_way_anova(matrices[main]) if n_runs >= 2 and n_questions >= 2 else None
    return TrackStatistics(intervals=intervals, hsd=hsd, anova=anova)
