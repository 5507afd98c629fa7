"""A leaderboard as the pages, exports and API read it: one snapshot's rows and statistics,
typed so that a renamed key fails mypy rather than a page. `as_json()` is the API's shape;
older snapshots are read too (docs/results.md, "The leaderboard")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scoring.measures.catalogue import (
    RANKS_BY,
    Measure,
    cover_k_of,
    label_of,
    measure_named,
    measures_of,
    ranking_key,
)
from scoring.measures.rubric import DEFAULT_COVER_K

#: Where two runs "differ" by the Tukey HSD, on the pages and in the LaTeX export.
SIGNIFICANCE_LEVEL = 0.05



#: The settings a ranking/response snapshot records beside its rows, in the order the
#: pages, the CSV and the LaTeX caption show them; `cover_k` is the track's, response too.
PARAMS = ("min_grade", "label", "cover_k", "depth")


def snapshot_cover_k(params: Mapping[str, Any]) -> int:
    """The track's cover_k as a snapshot recorded it, which Rubric-Cover's key carries; 10
    (DEFAULT_COVER_K) if none: older response snapshots recorded None, the oldest nothing."""
    recorded = params.get("cover_k")
    return DEFAULT_COVER_K if recorded is None else int(recorded)


def params_in_order(stored: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's settings in `PARAMS` order, whatever order the database kept: a
    PostgreSQL jsonb column sorts its keys (by length), SQLite keeps them as written."""
    return {key: stored[key] for key in PARAMS if key in stored} | {
        key: value for key, value in stored.items() if key not in PARAMS}


@dataclass(frozen=True)
class Interval:
    """A mean and its 95% interval (no bounds: fewer than two questions)."""

    mean: float
    lower: float | None
    upper: float | None

    def as_json(self) -> dict[str, float | None]:
        return {"mean": self.mean, "lower": self.lower, "upper": self.upper}

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> Interval:
        return cls(stored["mean"], stored.get("lower"), stored.get("upper"))


@dataclass(frozen=True)
class HsdPair:
    """Two runs compared by the randomised Tukey HSD: a's mean minus b's, and p."""

    a: str
    b: str
    difference: float
    p_value: float

    @property
    def significant(self) -> bool:
        return self.p_value < SIGNIFICANCE_LEVEL

    def as_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "difference": self.difference,
                "p_value": self.p_value}


@dataclass(frozen=True)
class Anova:
    residual_variance: float
    f_system: float | None
    p_system: float | None

    def as_json(self) -> dict[str, float | None]:
        return {"residual_variance": self.residual_variance, "f_system": self.f_system,
                "p_system": self.p_system}


@dataclass(frozen=True)
class Statistics:
    """What a snapshot computed over its question x run matrices, once, when it was taken: the
    intervals (`ci` and the ANOVA on `measure`), and the HSD of `hsd_measure` and of each
    `hsd_more` measure (docs/statistics.md)."""

    measure: str = ""
    ci: dict[str, Interval] = field(default_factory=dict)
    intervals: dict[str, dict[str, Interval]] = field(default_factory=dict)
    interval_method: str = ""
    hsd: list[HsdPair] = field(default_factory=list)
    hsd_permutations: int | None = None
    anova: Anova | None = None
    hsd_measure: str = ""
    hsd_more: dict[str, list[HsdPair]] = field(default_factory=dict)

    @property
    def tested(self) -> str:
        """The measure `hsd` is on."""
        return self.hsd_measure or self.measure

    def tests(self) -> dict[str, list[HsdPair]]:
        """Every randomised Tukey HSD, by measure: the ranking measure's first."""
        return {self.tested: self.hsd, **self.hsd_more} if self.hsd else {}

    def as_json(self) -> dict[str, Any]:
        stored: dict[str, Any] = {
            "measure": self.measure,
            "ci": {run: ci.as_json() for run, ci in self.ci.items()},
            "intervals": {measure: {run: ci.as_json() for run, ci in runs.items()}
                          for measure, runs in self.intervals.items()},
            "interval_method": self.interval_method,
            "hsd": [pair.as_json() for pair in self.hsd],
            "anova": self.anova.as_json() if self.anova else None,
        }
        if self.hsd_permutations is not None:
            stored["hsd_permutations"] = self.hsd_permutations
        if self.hsd_measure:
            stored["hsd_measure"] = self.hsd_measure
        if self.hsd_more:
            stored["hsd_more"] = {key: [pair.as_json() for pair in pairs]
                                  for key, pairs in self.hsd_more.items()}
        return stored

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> Statistics:
        anova = stored.get("anova")
        ci = {run: Interval.from_json(value) for run, value in stored.get("ci", {}).items()}
        intervals = {measure: {run: Interval.from_json(value) for run, value in runs.items()}
                     for measure, runs in stored.get("intervals", {}).items()}
        measure = stored.get("measure", "")
        if measure and ci and measure not in intervals:
            intervals[measure] = ci  # an older snapshot: its main measure's CIs
        return cls(
            measure=measure, ci=ci, intervals=intervals,
            interval_method=stored.get("interval_method", "t distribution"),
            hsd=_pairs(stored.get("hsd", [])),
            hsd_permutations=stored.get("hsd_permutations"),
            anova=Anova(anova["residual_variance"], anova.get("f_system"),
                        anova.get("p_system")) if anova else None,
            hsd_measure=stored.get("hsd_measure", ""),
            hsd_more={key: _pairs(pairs) for key, pairs in stored.get("hsd_more", {}).items()},
        )


def statistics_renamed(stored: Mapping[str, Any], old: str, new: str) -> dict[str, Any]:
    """Stored statistics (`Statistics.as_json`) with measure `old` called `new` wherever they
    name one: `measure`, `hsd_measure`, the keys of `intervals` and `hsd_more`."""
    renamed = dict(stored)
    for part in ("measure", "hsd_measure"):
        if renamed.get(part) == old:
            renamed[part] = new
    for part in ("intervals", "hsd_more"):
        if part in renamed:
            renamed[part] = {new if key == old else key: value
                             for key, value in renamed[part].items()}
    return renamed


def _pairs(stored: list[Mapping[str, Any]]) -> list[HsdPair]:
    return [HsdPair(p["a"], p["b"], p["difference"], p["p_value"]) for p in stored]


def best_first(rows: list[LeaderboardRow], measure: str) -> list[LeaderboardRow]:
    """`rows` sorted by `measure`, highest first; a row without it last."""
    return sorted(rows, key=lambda row: -(row.score(measure) or 0.0))


def ranks_by(kind: str, statistics: Statistics, cover_k: int | None = None) -> str:
    """The measure a track's leaderboard is ranked by, Rubric-Cover keyed by the track's
    `cover_k` (its statistics' one if the kind is unlisted)."""
    return ranking_key(kind, cover_k) if kind in RANKS_BY else statistics.measure


@dataclass(frozen=True)
class LeaderboardRow:
    run: str
    run_id: int
    team: str
    scores: dict[str, float]  # measure key -> value, full precision
    incomplete_questions: int = 0

    def score(self, key: str) -> float | None:
        return self.scores.get(key)

    def as_json(self) -> dict[str, Any]:
        return {"run": self.run, "run_id": self.run_id, "team": self.team, **self.scores,
                "incomplete_questions": self.incomplete_questions}


@dataclass(frozen=True)
class Leaderboard:
    """One snapshot of a track, rows best first by the track's ranking measure."""

    track: str
    kind: str
    evaluation: int
    judge: str
    computed_at: datetime
    published: bool
    stale: bool  # computed before the latest judgment edit (docs/judging.md)
    edited_judgments: int
    needs_review: int
    fingerprint: str
    questions: int
    rows: list[LeaderboardRow]
    statistics: Statistics
    # A ranking/response track's settings its numbers and keys depend on (min_grade, label,
    # cover_k, depth), sent beside the rows; empty for PR and AC.
    params: dict[str, Any] = field(default_factory=dict)
    # How the labels behind it were decided, per kind, when it was published.
    labels: dict[str, Any] = field(default_factory=dict)

    @property
    def cover_k(self) -> int:
        """The track's cover_k, which its Rubric-Cover's key carries (`snapshot_cover_k`)."""
        return snapshot_cover_k(self.params)

    @property
    def value_k(self) -> int | None:
        """The k its Rubric-Cover's value was computed at (`cover_k_of`): None for a
        response, which counts all its segments."""
        return cover_k_of(self.kind, self.cover_k)

    @property
    def ranked_by(self) -> str:
        return ranks_by(self.kind, self.statistics, self.cover_k)

    def measures(self, *, leaderboard: bool = True) -> list[Measure]:
        """Its measures in catalogue order, under the keys its rows have."""
        return measures_of(self.kind, cover_k=self.cover_k, leaderboard=leaderboard)

    def measure(self, key: str) -> Measure:
        """Its measure called `key` (KeyError if none)."""
        return measure_named(key, self.kind, cover_k=self.cover_k)

    def label_of(self, key: str) -> str:
        """The label of its measure `key`; an unknown key as itself."""
        return label_of(key, cover_k=self.cover_k)

    def runs_by(self, measure: str) -> list[str]:
        """Run names, best first by `measure`."""
        return [row.run for row in best_first(self.rows, measure)]

    def as_json(self) -> dict[str, Any]:
        return {
            "track": self.track, "kind": self.kind, "evaluation": self.evaluation,
            "judge": self.judge, "computed_at": self.computed_at.isoformat(),
            "published": self.published, "stale": self.stale,
            "edited_judgments": self.edited_judgments, "needs_review": self.needs_review,
            "fingerprint": self.fingerprint, "questions": self.questions,
            **self.params,
            "rows": [row.as_json() for row in self.rows],
            "statistics": self.statistics.as_json(),
            "labels": self.labels,
        }
