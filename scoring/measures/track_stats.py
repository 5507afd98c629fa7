"""The statistics of a track's snapshot, on its question x run score matrices.

What a leaderboard shows beside its means (DESIGN.md section 9): a bootstrap interval
per run for each interval measure, and the randomised Tukey HSD and two-way ANOVA of the
track's statistics measure. Every one of them is computed on whole matrices (`stats`,
`hsd`), never run by run or question by question; the scoring services and
bench/bench_scoring.py both call `track_statistics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from .hsd import TukeyHsdResult, randomised_tukey_hsd
from .stats import FloatArray, MeanCI, TwoWayAnova, bootstrap_cis, two_way_anova


@dataclass(frozen=True)
class TrackStatistics:
    """`intervals`: measure -> one interval per run (in run order), when there are at
    least two questions; `hsd` when there are two runs; `anova` when both."""

    intervals: dict[str, list[MeanCI]]
    hsd: TukeyHsdResult | None
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
) -> TrackStatistics:
    """Intervals for every measure in `matrices` (question x run, columns in
    `run_names` order), and the HSD and ANOVA of `main`, one of them.

    The intervals of all measures come from one bootstrap over the side-by-side
    matrices: the same resamples of the questions (one seed) for every measure, as
    separate calls with that seed would draw, and the draws and matrix products made
    once. The HSD is seeded with `seed` too.
    """
    n_questions, n_runs = matrices[main].shape
    intervals: dict[str, list[MeanCI]] = {}
    if n_questions >= 2 and n_runs >= 1:
        keys = list(matrices)
        cis = bootstrap_cis(np.hstack([matrices[key] for key in keys]), seed=seed)
        intervals = {key: cis[i * n_runs : (i + 1) * n_runs] for i, key in enumerate(keys)}
    hsd = None
    if n_runs >= 2:
        hsd = randomised_tukey_hsd(matrices[main], run_names=run_names,
                                   n_permutations=n_permutations, seed=seed)
    anova = two_way_anova(matrices[main]) if n_runs >= 2 and n_questions >= 2 else None
    return TrackStatistics(intervals=intervals, hsd=hsd, anova=anova)
