"""The measures of a leaderboard, each described once: scoring, statistics, pages, exports
and the `score` command all read this list, so a measure shows in all of them or none.
How to add one: docs/measures.md, "Adding a measure"."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from campaign.kinds import kind_of

from . import ac_parts
from .ac_parts import FromParts
from .common import QuestionScores

Kind = Literal["ac", "pr", "ranking", "response"]
#: How a value is shown: a number (4 decimals on pages), a verdict (correct or not), a
#: percentage (a confidence 0..1 shown 0..100).
Format = Literal["number", "verdict", "percent"]

#: Rubric-Cover's key and label as the catalogue names it, without a k (RANKS_BY); a
#: track's carry its cover_k (`rubric_cover_name`).
RUBRIC_COVER = "rubric_cover"
RUBRIC_COVER_LABEL = "Rubric-Cover"


def _at_k(name: str, k: int | None) -> str:
    # The one place a measure's k joins its name (rubric_cover@5, Rubric-Cover@5).
    return name if k is None else f"{name}@{k}"


def rubric_cover_name(cover_k: int) -> str:
    """Rubric-Cover's key on a ranking or response track whose cover_k is `cover_k`
    (`rubric_cover@5`), whatever k its value is computed at (`cover_k_of`)."""
    return _at_k(RUBRIC_COVER, cover_k)


#: What every track's Rubric-Cover was called, whatever its k, before the key carried the
#: k: snapshots and archives of that time (docs/measures.md).
LEGACY_RUBRIC_COVER = rubric_cover_name(10)


def cover_k_of(kind: str, cover_k: int | None) -> int | None:
    """The k Rubric-Cover's value is computed at on a track of `kind` whose cover_k is
    `cover_k`: a ranking track's; None (all its segments) for a response, and other kinds."""
    entry = kind_of(kind)
    return cover_k if entry.rubric and entry.ranked else None


@dataclass(frozen=True)
class Measure:
    """One column of a leaderboard (or, with `leaderboard=False`, of the drill-down)."""

    key: str  # as stored in a snapshot and sent by the API
    kind: Kind
    label: str
    description: str
    label_html: str = ""  # the label with markup (R<sub>O</sub>); the label otherwise
    higher_is_better: bool = True
    leaderboard: bool = True  # a column of the leaderboard (False: per question only)
    per_question: bool = False  # a column of a run's per-question drill-down
    interval: bool = False  # shown as a mean with its 95% interval on the results page
    format: Format = "number"
    compute: Callable[..., QuestionScores] | None = None
    # A measure that is no mean over questions: how its randomised test recomputes it.
    from_parts: FromParts | None = None
    # Its key and label carry the track's cover_k (`at`), whatever k its value is taken at.
    at_cover_k: bool = False

    def at(self, cover_k: int | None) -> Measure:
        """This measure on a track whose cover_k is `cover_k`: one `at_cover_k` gets the k in
        its key and label (rubric_cover@5); others stay as they are."""
        if not self.at_cover_k:
            return self
        return replace(self, key=_at_k(self.key, cover_k), label=_at_k(self.label, cover_k),
                       at_cover_k=False)

    @property
    def testable(self) -> bool:
        """Whether a randomised Tukey HSD can test it: a mean of per-question values, or
        a measure recomputed from per-question parts."""
        return self.leaderboard and (self.per_question or self.from_parts is not None)

    @property
    def html(self) -> str:
        return self.label_html or self.label


def _pr(key: str, label: str, description: str, **options: Any) -> Measure:
    return Measure(key, "pr", label, description, per_question=True, **options)


def _rubric(kind: Kind) -> list[Measure]:
    """The leaderboard of a ranking or response track (docs/measures.md)."""
    return [
        Measure(RUBRIC_COVER, kind, RUBRIC_COVER_LABEL,
                "share of the query's test-bank items graded at least min_grade in the "
                "top k passages (k = the track's cover_k, 10 by default; a response: all "
                "its segments)", per_question=True, interval=True, at_cover_k=True),
        Measure("n_exam", kind, "n-EXAM",
                "Rubric-Cover over the items that some run of the track covers",
                per_question=True),
        Measure("ndcg@10", kind, "nDCG@10",
                "trec_eval's ndcg_cut.10 on Rubric-Qrels, the labels as gains",
                per_question=True),
        Measure("map", kind, "MAP", "trec_eval's map on Rubric-Qrels at level min_grade",
                per_question=True),
        Measure("recip_rank", kind, "MRR",
                "trec_eval's recip_rank on Rubric-Qrels at level min_grade",
                per_question=True),
        Measure("p@10", kind, "P@10", "trec_eval's P_10 on Rubric-Qrels at level min_grade",
                per_question=True),
    ]


CATALOGUE: list[Measure] = [
    Measure("accuracy", "ac", "Accuracy",
            "share of the campaign's questions answered correctly", from_parts=ac_parts.ACCURACY),
    Measure("nugget_precision", "ac", "Nugget precision",
            "mean over questions of relevant nuggets / returned nuggets",
            per_question=True, interval=True),
    Measure("r_o", "ac", "R_O", "1 - mean confidence on the incorrect answers (1 if none)",
            label_html="R<sub>O</sub>", from_parts=ac_parts.R_O),
    Measure("r_u", "ac", "R_U",
            "1 - mean (1 - confidence) on the correct answers (1 if none)",
            label_html="R<sub>U</sub>", from_parts=ac_parts.R_U),
    Measure("hmr", "ac", "HMR", "harmonic mean of R_O and R_U: the ranking measure",
            from_parts=ac_parts.HMR),
    Measure("ece", "ac", "ECE",
            "expected calibration error over 10 equal-width bins (lower is better)",
            higher_is_better=False),
    Measure("brier", "ac", "Brier", "mean squared error of the confidences (lower is better)",
            higher_is_better=False),
    Measure("correct", "ac", "Correct", "whether the answer was judged correct",
            leaderboard=False, per_question=True, format="verdict"),
    Measure("confidence", "ac", "Confidence (0 to 100)", "the run's stated confidence",
            leaderboard=False, per_question=True, format="percent"),
    _pr("ndcg@10", "nDCG@10", "trec_eval's ndcg_cut.10, linear gain", interval=True),
    _pr("ndcg@20", "nDCG@20", "trec_eval's ndcg_cut.20, linear gain", interval=True),
    _pr("q_measure", "Q-measure", "NTCIREVAL's Q-measure (beta = 1)"),
    _pr("nerr@10", "nERR@10", "NTCIREVAL's normalised ERR at 10"),
    _pr("nerr@20", "nERR@20", "NTCIREVAL's normalised ERR at 20"),
    _pr("ms_ndcg@10", "MSnDCG@10", "NTCIREVAL's nDCG@10 (Microsoft version)"),
    _pr("ms_ndcg@20", "MSnDCG@20", "NTCIREVAL's nDCG@20 (Microsoft version)"),
    *_rubric("ranking"),
    *_rubric("response"),
]

#: The column a leaderboard is ranked by, as the catalogue names it (`ranking_key` gives a
#: track's key). A RUBRIC track by Rubric-Cover, its leaderboard's first column.
RANKS_BY: dict[str, str] = {"ac": "hmr", "pr": "ndcg@10", "ranking": RUBRIC_COVER,
                            "response": RUBRIC_COVER}
#: The measure of the topic-by-run matrix that the CIs and the ANOVA are computed on: a
#: mean over questions (HMR, which ranks AC runs, is not one).
STATISTICS_ON: dict[str, str] = {"ac": "nugget_precision", "pr": "ndcg@10",
                                  "ranking": RUBRIC_COVER, "response": RUBRIC_COVER}
#: The randomised Tukey HSD is always run on the ranking measure (RANKS_BY), and on the
#: other testable measures a track's organisers pick.
HSD_PERMUTATIONS = 5000  # B, the NTCIR practice
HSD_SEED = 20260401  # fixed: re-scoring the same judgments gives the same p-values
#: The questions a track's means are taken over (said on the pages).
_RUBRIC_MEAN_OVER = ("queries with test-bank items (n-EXAM: with an item some run covers; "
                     "Rubric-Qrels measures: with a relevant passage)")
MEAN_OVER: dict[str, str] = {"ac": "all questions", "pr": "questions with a relevant passage",
                             "ranking": _RUBRIC_MEAN_OVER, "response": _RUBRIC_MEAN_OVER}


def measures_of(kind: str, *, cover_k: int | None = None,
                leaderboard: bool = True) -> list[Measure]:
    """The measures of a track kind in their order, Rubric-Cover named by the track's `cover_k`:
    the leaderboard's columns, or (`leaderboard=False`) every one, per-question-only too."""
    return [m.at(cover_k) for m in CATALOGUE
            if m.kind == kind and (m.leaderboard or not leaderboard)]


def _named(catalogue_key: str, kind: str, cover_k: int | None) -> str:
    return next(m.at(cover_k).key for m in CATALOGUE
                if m.kind == kind and m.key == catalogue_key)


def ranking_key(kind: str, cover_k: int | None = None) -> str:
    """The key of the measure a track's leaderboard is ranked by (RANKS_BY, its `cover_k`)."""
    return _named(RANKS_BY[kind], kind, cover_k)


def statistics_key(kind: str, cover_k: int | None = None) -> str:
    """The key of the measure a track's intervals and ANOVA are on (STATISTICS_ON)."""
    return _named(STATISTICS_ON[kind], kind, cover_k)


def significance_candidates(kind: str) -> list[str]:
    """The keys of the leaderboard measures of `kind` a randomised Tukey HSD can test."""
    return [m.key for m in measures_of(kind) if m.testable]


def measure_named(key: str, kind: str, *, cover_k: int | None = None) -> Measure:
    """The measure of `kind` called `key` on a track whose cover_k is `cover_k` (KeyError if
    none)."""
    for measure in measures_of(kind, cover_k=cover_k, leaderboard=False):
        if measure.key == key:
            return measure
    raise KeyError(key)


def measures_of_tracks(tracks: Iterable[tuple[str, int | None]]) -> list[Measure]:
    """The leaderboard measures of tracks given as (kind, cover_k), in catalogue order, each
    key once (Rubric-Cover once per k met)."""
    tracks = list(dict.fromkeys(tracks))
    found: dict[str, Measure] = {}
    for measure in CATALOGUE:
        for kind, cover_k in tracks:
            if measure.leaderboard and measure.kind == kind:
                found.setdefault(measure.at(cover_k).key, measure.at(cover_k))
    return list(found.values())


def per_question_measures(kind: str, *, cover_k: int | None = None) -> list[Measure]:
    """The columns of a run's per-question drill-down."""
    return [m for m in measures_of(kind, cover_k=cover_k, leaderboard=False) if m.per_question]


def label_of(key: str, *, cover_k: int | None = None) -> str:
    """A measure's label on a track whose cover_k is `cover_k`; an unknown key (an older
    snapshot's) as itself."""
    return next((m.at(cover_k).label for m in CATALOGUE if m.at(cover_k).key == key), key)
