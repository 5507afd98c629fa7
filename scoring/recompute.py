"""The pure steps of a snapshot above the measures (its statistics, the catalogue's extra
measures), shared by `scoring.services` and `scoring.replay` so that a replayed number
comes from the code that published it. No Django: the replay imports this module."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from scoring.leaderboard import Anova, HsdPair, Interval, Statistics
from scoring.measures.catalogue import (
    HSD_PERMUTATIONS,
    HSD_SEED,
    measure_named,
    measures_of,
    ranking_key,
    statistics_key,
)
from scoring.measures.stats import BOOTSTRAP_RESAMPLES
from scoring.measures.track_stats import HsdInput, question_matrix, track_statistics

INTERVAL_METHOD = f"bootstrap percentile, {BOOTSTRAP_RESAMPLES} resamples of the questions"


def snapshot_statistics(kind: str, run_names: list[str], qids: list[str],
                        per_question: Sequence[Mapping[str, Mapping[str, float]]], *,
                        n_permutations: int = HSD_PERMUTATIONS, seed: int = HSD_SEED,
                        tested: Sequence[str] | None = None,
                        cover_k: int | None = None) -> Statistics:
    """The snapshot's statistics over its question x run matrices (a missing score counts 0):
    intervals, the ANOVA, and each `tested` measure's HSD (docs/statistics.md); Rubric-Cover
    named by the track's `cover_k`. A replay passes the archive's B, seed and tested measures."""
    main = statistics_key(kind, cover_k)
    tested = list(tested) if tested is not None else [ranking_key(kind, cover_k)]
    statistics = Statistics(measure=main, interval_method=INTERVAL_METHOD)
    if not run_names or not qids:
        return statistics
    measures = [measure_named(key, kind, cover_k=cover_k) for key in tested]
    interval_keys = [m.key for m in measures_of(kind, cover_k=cover_k)
                     if m.interval or m.key == main]
    read = [*interval_keys, *(m.key for m in measures if m.from_parts is None),
            *(key for m in measures if m.from_parts for key in m.from_parts.inputs)]
    matrices = {key: question_matrix([scores.get(key, {}) for scores in per_question], qids)
                for key in dict.fromkeys(read)}
    tests = {m.key: HsdInput(matrices[m.key]) if m.from_parts is None else
             HsdInput(m.from_parts.matrices(matrices), m.from_parts.statistic(len(qids)))
             for m in measures}
    computed = track_statistics({key: matrices[key] for key in interval_keys},
                                main=main, run_names=run_names,
                                n_permutations=n_permutations, seed=seed, tests=tests)
    for key, cis in computed.intervals.items():
        statistics.intervals[key] = {name: Interval(ci.mean, ci.lower, ci.upper)
                                     for name, ci in zip(run_names, cis, strict=True)}
    if computed.intervals:
        statistics.ci.update(statistics.intervals[main])
    pairs = {key: [HsdPair(p.run_a, p.run_b, p.difference, p.p_value) for p in result.pairs()]
             for key, result in computed.hsd.items()}
    anova = None
    if computed.anova is not None:
        f_system: float | None = computed.anova.f_system
        p_system: float | None = computed.anova.p_system
        if f_system is not None and not math.isfinite(f_system):
            # A zero residual (every run's scores a constant apart): F is +inf, which
            # JSON cannot hold (SQLite's and PostgreSQL's JSON refuse it), and there is
            # no F test to report.
            f_system = p_system = None
        anova = Anova(computed.anova.residual_variance, f_system, p_system)
    return replace(statistics, hsd=pairs.get(tested[0], []), anova=anova,
                   hsd_permutations=n_permutations if pairs else None,
                   hsd_measure=tested[0] if pairs else "",
                   hsd_more={key: pairs[key] for key in tested[1:] if key in pairs})


def add_extra_measures(kind: str, aggregates: dict[str, float],
                       per_question: dict[str, dict[str, float]], *, name_k: int | None = None,
                       **inputs: Any) -> None:
    """Add every catalogue measure of `kind` that brings its own function (the built-in ones
    come from score_ac_track / score_pr_track / score_rubric_run), named by `name_k`, the
    track's cover_k; `inputs` go to the functions."""
    for measure in measures_of(kind, cover_k=name_k, leaderboard=False):
        if measure.compute is not None:
            scores = measure.compute(**inputs)
            if measure.leaderboard:
                aggregates[measure.key] = scores.mean
            if measure.per_question:
                per_question[measure.key] = dict(scores.per_question)
