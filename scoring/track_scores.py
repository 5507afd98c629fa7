"""A track's numbers from its pure inputs, one function per kind of track: each run's scores and
per-question scores, and the track's statistics. The service and the replay both call these,
so that a replayed number comes from the code that published it. No Django."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scoring.leaderboard import Statistics
from scoring.measures import JudgedAnswer, score_ac_track, score_pr_track
from scoring.measures.catalogue import HSD_PERMUTATIONS, HSD_SEED
from scoring.measures.rubric import pooled_cover, score_rubric_run
from scoring.recompute import add_extra_measures, snapshot_statistics

#: Per question, per measure: {measure: {qid: score}}.
PerQuestion = dict[str, dict[str, float]]


@dataclass(frozen=True)
class RunRow:
    """One run's numbers on its track."""

    scores: dict[str, float]
    per_question: PerQuestion


@dataclass(frozen=True)
class Tests:
    """What the track's statistics test, and with which draws (a replay: the archive's)."""

    tested: Sequence[str] | None = None  # None: the ranking measure alone
    permutations: int = HSD_PERMUTATIONS
    seed: int = HSD_SEED


@dataclass(frozen=True)
class TrackScores:
    """A track's rows by run name, in the order its runs were given, and its statistics."""

    rows: dict[str, RunRow]
    statistics: Statistics
    qids: list[str] = field(default_factory=list)  # the questions the statistics are over


def _statistics(kind: str, rows: Mapping[str, RunRow], qids: list[str], tests: Tests,
                cover_k: int | None = None) -> Statistics:
    names = list(rows)
    return snapshot_statistics(kind, names, qids, [rows[name].per_question for name in names],
                               n_permutations=tests.permutations, seed=tests.seed,
                               tested=tests.tested, cover_k=cover_k)


def ac_scores(*, qids: list[str], answers_of: Mapping[str, Mapping[str, JudgedAnswer]],
              tests: Tests = Tests()) -> TrackScores:
    """An AC track: each run's judged answers scored over the campaign's questions."""
    scores = score_ac_track(qids=qids, runs=answers_of) if answers_of else {}
    rows = {}
    for name in answers_of:
        aggregates, per_question = scores[name].leaderboard_row(), scores[name].per_question()
        add_extra_measures("ac", aggregates, per_question, qids=qids, answers=answers_of[name])
        rows[name] = RunRow(aggregates, per_question)
    return TrackScores(rows, _statistics("ac", rows, qids, tests), qids)


def pr_scores(*, qrels: Mapping[str, Mapping[str, int]],
              rankings_of: Mapping[str, Mapping[str, list[str]]],
              tests: Tests = Tests()) -> TrackScores:
    """A PR track: each run's rankings (PassageKeys) on the qrels derived from AC judgments;
    with no qrels, rows without numbers."""
    scores = score_pr_track(qrels=qrels, runs=rankings_of) if qrels and rankings_of else {}
    rows = {}
    for name in rankings_of:
        aggregates: dict[str, float] = {}
        per_question: PerQuestion = {}
        if qrels:
            aggregates, per_question = scores[name].leaderboard_row(), scores[name].per_question()
            add_extra_measures("pr", aggregates, per_question, qrels=qrels,
                               rankings=rankings_of[name])
        rows[name] = RunRow(aggregates, per_question)
    qids = sorted(qrels)
    return TrackScores(rows, _statistics("pr", rows, qids, tests), qids)


@dataclass(frozen=True)
class RubricInputs:
    """What a ranking or response track is scored on: its runs' rankings, its pool's grades,
    its test bank, its Rubric-Qrels and its settings."""

    kind: str
    qids: list[str]
    rankings_of: Mapping[str, Mapping[str, list[str]]]
    grades: Mapping[str, Mapping[str, Mapping[str, int]]]
    items: Mapping[str, list[str]]
    qrels: Mapping[str, Mapping[str, int]]
    min_grade: int
    value_k: int | None  # the k Rubric-Cover is computed at (None: every segment)
    name_k: int  # the k its name carries: the track's cover_k


def rubric_scores(inputs: RubricInputs, tests: Tests = Tests()) -> TrackScores:
    """A ranking or response track: Rubric-Cover, n-EXAM and the measures on Rubric-Qrels."""
    pooled = pooled_cover(runs=list(inputs.rankings_of.values()),
                          grades=inputs.grades, items=inputs.items, k=inputs.value_k,
                          min_grade=inputs.min_grade)
    rows = {}
    for name in inputs.rankings_of:
        rankings = inputs.rankings_of[name]
        scores = score_rubric_run(rankings=rankings, grades=inputs.grades, items=inputs.items,
                                  qrels=inputs.qrels, pooled=pooled, min_grade=inputs.min_grade,
                                  cover_k=inputs.value_k, name_k=inputs.name_k)
        aggregates, per_question = scores.leaderboard_row(), scores.per_question()
        add_extra_measures(inputs.kind, aggregates, per_question, name_k=inputs.name_k,
                           rankings=rankings, grades=inputs.grades, items=inputs.items,
                           qrels=inputs.qrels, min_grade=inputs.min_grade,
                           cover_k=inputs.value_k)
        rows[name] = RunRow(aggregates, per_question)
    statistics = _statistics(inputs.kind, rows, inputs.qids, tests, cover_k=inputs.name_k)
    return TrackScores(rows, statistics, inputs.qids)
