"""AC measures of NTCIR-19 R2C2: accuracy, nugget precision, O, U, R_O, R_U, HMR (Sakai,
R2C2 task definition), with ECE and Brier beside them. A missing answer counts as wrong,
confidence 0, nugget precision 0; every mean is over all N questions (docs/measures.md)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import attrgetter, methodcaller
from typing import TypeVar

import numpy as np
import numpy.typing as npt

# The marks B, R, N are the marked AC run format's (docs/formats.md), defined once in
# the lowest pure package, which the measures may import.
from submissions.formats.marked_ac_run import MARKS, RELEVANT

MAX_CONFIDENCE = 100
ECE_BINS = 10

BAD_CONFIDENCE = "confidence must be an integer 0..100, got {confidence!r}"
BAD_MARK = "a nugget mark must be one of B, R, N, got {mark!r}"
BAD_PROBABILITY = "probabilities must lie in [0, 1]"
LENGTH_MISMATCH = "confidences and outcomes differ in length ({left} != {right})"
NO_QUESTIONS = "a campaign needs at least one question"
DUPLICATE_QUESTION = "question {qid} is listed twice in the campaign"
UNKNOWN_QUESTION = "question {qid} is answered but is not one of the campaign's questions"
BAD_BIN_COUNT = "the number of bins must be a positive integer, got {n_bins!r}"

RunKey = TypeVar("RunKey", bound=Hashable)  # whatever names a run: its name, its id

# Confidences are integers / 100, so p * n_bins can land a hair below a bin edge in
# floating point (e.g. 0.7 * 10); this nudge keeps 70 in bin [0.7, 0.8) as intended.
_EDGE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class JudgedAnswer:
    """One judged answer block of an AC run: its (possibly post-edited) verdict, the run's
    confidence 0..100, and each nugget line's mark in file order."""

    correct: bool
    confidence: int
    marks: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        confidence = self.confidence
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, int)
            or not 0 <= confidence <= MAX_CONFIDENCE
        ):
            raise ValueError(BAD_CONFIDENCE.format(confidence=confidence))
        marks = tuple(self.marks)
        for mark in marks:
            if mark not in MARKS:
                raise ValueError(BAD_MARK.format(mark=mark))
        object.__setattr__(self, "marks", marks)
        object.__setattr__(self, "correct", bool(self.correct))


@dataclass(frozen=True)
class AcQuestionScore:
    """Per-question scores of an AC run; `answered` is False for a missing block."""

    qid: str
    answered: bool
    correct: bool
    probability: float
    relevant_nuggets: int
    returned_nuggets: int
    nugget_precision: float


@dataclass(frozen=True)
class AcQuestionColumns:
    """The per-question scores of one AC run, column by column in the campaign's question
    order: what `AcQuestionScore` holds, without an object per question (a track of 100
    runs over 1,000 questions would build 100,000 of them to store three numbers each)."""

    qids: tuple[str, ...]
    answered: tuple[bool, ...]
    correct: tuple[bool, ...]
    probability: tuple[float, ...]
    relevant_nuggets: tuple[int, ...]
    returned_nuggets: tuple[int, ...]
    nugget_precision: tuple[float, ...]


@dataclass(frozen=True)
class AcRunScores:
    """Every AC measure of one run over the campaign's N questions (docs/measures.md): O and
    U summed; R_O, R_U, HMR higher-better; ECE, Brier lower-better; per question in `columns`."""

    n_questions: int
    n_correct: int
    accuracy: float
    nugget_precision: float
    o: float
    u: float
    r_o: float
    r_u: float
    hmr: float
    ece: float
    brier: float
    columns: AcQuestionColumns

    @cached_property
    def questions(self) -> tuple[AcQuestionScore, ...]:
        """Per-question scores, one object per question."""
        c = self.columns
        return tuple(map(AcQuestionScore, c.qids, c.answered, c.correct, c.probability,
                         c.relevant_nuggets, c.returned_nuggets, c.nugget_precision))

    def by_qid(self) -> dict[str, AcQuestionScore]:
        """Per-question scores keyed by question id."""
        return {question.qid: question for question in self.questions}

    def per_question(self) -> dict[str, dict[str, float]]:
        """measure -> qid -> value, as a snapshot stores them (catalogue.py's keys)."""
        columns = self.columns
        return {
            "correct": dict(zip(columns.qids, map(float, columns.correct), strict=True)),
            "nugget_precision": dict(zip(columns.qids, columns.nugget_precision, strict=True)),
            "confidence": dict(zip(columns.qids, columns.probability, strict=True)),
        }

    def leaderboard_row(self) -> dict[str, float]:
        """The AC leaderboard columns, full precision."""
        return {
            "accuracy": self.accuracy,
            "nugget_precision": self.nugget_precision,
            "r_o": self.r_o,
            "r_u": self.r_u,
            "hmr": self.hmr,
            "ece": self.ece,
            "brier": self.brier,
        }


def nugget_precision(marks: Sequence[str]) -> float:
    """Relevant nuggets / all returned nuggets (bogus included), 0 if none were returned.
    Source: NTCIR-19 R2C2 task definition (Sakai)."""
    for mark in marks:
        if mark not in MARKS:
            raise ValueError(BAD_MARK.format(mark=mark))
    if not marks:
        return 0.0
    return sum(1 for mark in marks if mark == RELEVANT) / len(marks)


def overconfidence(probabilities: npt.ArrayLike, correct: npt.ArrayLike) -> float:
    """O = sum over the incorrect answers I- of p(i).
    Source: NTCIR-19 R2C2 task definition (Sakai)."""
    p, outcome = _probabilities_and_outcomes(probabilities, correct)
    return float(p[~outcome].sum())


def underconfidence(probabilities: npt.ArrayLike, correct: npt.ArrayLike) -> float:
    """U = sum over the correct answers I+ of (1 - p(i)).
    Source: NTCIR-19 R2C2 task definition (Sakai)."""
    p, outcome = _probabilities_and_outcomes(probabilities, correct)
    return float((1.0 - p[outcome]).sum())


def r_o(o: float, n_incorrect: int) -> float:
    """R_O = 1 - O / |I-|, and 1 when I- is empty (nothing to be overconfident about).
    Source: NTCIR-19 R2C2 task definition (Sakai)."""
    return 1.0 if n_incorrect == 0 else 1.0 - o / n_incorrect


def r_u(u: float, n_correct: int) -> float:
    """R_U = 1 - U / |I+|, and 1 when I+ is empty (nothing to be underconfident about).
    Source: NTCIR-19 R2C2 task definition (Sakai)."""
    return 1.0 if n_correct == 0 else 1.0 - u / n_correct


def hmr(r_o_value: float, r_u_value: float) -> float:
    """HMR = 2 R_O R_U / (R_O + R_U), the harmonic mean of R_O and R_U; 0 if both are 0.
    Source: NTCIR-19 R2C2 task definition (Sakai)."""
    total = r_o_value + r_u_value
    return 0.0 if total == 0 else 2.0 * r_o_value * r_u_value / total


def calibration_bins(
    probabilities: npt.ArrayLike, *, n_bins: int = ECE_BINS
) -> npt.NDArray[np.intp]:
    """The ECE bin of each probability: k for p in [k/n, (k+1)/n), and n - 1 for p = 1.0,
    so that confidence 100 has a bin (docs/measures.md)."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(BAD_BIN_COUNT.format(n_bins=n_bins))
    p = _probabilities(probabilities)
    return np.minimum(np.floor(p * n_bins + _EDGE_TOLERANCE).astype(np.intp), n_bins - 1)


def expected_calibration_error(
    probabilities: npt.ArrayLike, correct: npt.ArrayLike, *, n_bins: int = ECE_BINS
) -> float:
    """ECE = sum over bins b of |B_b| / N * |acc(B_b) - conf(B_b)|, bins as `calibration_bins`.
    Source: Naeini et al., AAAI 2015; Guo et al., ICML 2017, eq. 3 (docs/measures.md)."""
    bins = calibration_bins(probabilities, n_bins=n_bins)
    p, outcome = _probabilities_and_outcomes(probabilities, correct)
    if p.size == 0:
        return 0.0
    confidence_sum = np.bincount(bins, weights=p, minlength=n_bins)
    correct_sum = np.bincount(bins, weights=outcome.astype(np.float64), minlength=n_bins)
    # |B| * |acc - conf| = |sum(correct) - sum(p)| in each bin, so empty bins give 0.
    return float(np.abs(correct_sum - confidence_sum).sum() / p.size)


def brier_score(probabilities: npt.ArrayLike, correct: npt.ArrayLike) -> float:
    """Brier score = (1/N) sum of (p(i) - o(i))^2 with o(i) = 1 if correct else 0.
    Source: Brier, Monthly Weather Review 78(1), 1950 (the two-category case)."""
    p, outcome = _probabilities_and_outcomes(probabilities, correct)
    if p.size == 0:
        return 0.0
    return float(np.mean((p - outcome.astype(np.float64)) ** 2))


def score_ac_run(*, qids: Sequence[str], answers: Mapping[str, JudgedAnswer]) -> AcRunScores:
    """Score one judged AC run (qid -> answer) over the campaign's questions `qids`; a question
    without an answer counts as wrong with p = 0. ValueError for an empty or repeated
    question list, or for an answer to a question outside it."""
    campaign = _campaign_questions(qids)
    _check_answered(campaign, answers)
    return _run_scores(tuple(qids), answers)


def score_ac_track(
    *, qids: Sequence[str], runs: Mapping[RunKey, Mapping[str, JudgedAnswer]]
) -> dict[RunKey, AcRunScores]:
    """Score every judged AC run of a track (run -> its answers) over the campaign's questions,
    checked once; each run's scores equal `score_ac_run`'s."""
    campaign = _campaign_questions(qids)
    ordered = tuple(qids)
    scores: dict[RunKey, AcRunScores] = {}
    for name, answers in runs.items():
        _check_answered(campaign, answers)
        scores[name] = _run_scores(ordered, answers)
    return scores


def _campaign_questions(qids: Sequence[str]) -> set[str]:
    if not qids:
        raise ValueError(NO_QUESTIONS)
    campaign: set[str] = set()
    for qid in qids:
        if qid in campaign:
            raise ValueError(DUPLICATE_QUESTION.format(qid=qid))
        campaign.add(qid)
    return campaign


def _check_answered(campaign: set[str], answers: Mapping[str, JudgedAnswer]) -> None:
    if not campaign.issuperset(answers):
        unknown = next(qid for qid in answers if qid not in campaign)
        raise ValueError(UNKNOWN_QUESTION.format(qid=unknown))


# A campaign question without an answer block: incorrect, p = 0, no nuggets.
_NO_ANSWER = JudgedAnswer(correct=False, confidence=0)
_CORRECT = attrgetter("correct")
_CONFIDENCE = attrgetter("confidence")
_MARKS = attrgetter("marks")
_RELEVANT_COUNT = methodcaller("count", RELEVANT)


def _run_scores(qids: tuple[str, ...], answers: Mapping[str, JudgedAnswer]) -> AcRunScores:
    """Every measure of one run whose answers name only campaign questions, read column by
    column with C-level maps (a track reads 100,000 answers)."""
    found = list(map(answers.get, qids, repeat(_NO_ANSWER)))
    marks = list(map(_MARKS, found))
    relevant = list(map(_RELEVANT_COUNT, marks))
    returned = list(map(len, marks))
    # JudgedAnswer has checked every mark, so R / all returned is `nugget_precision`.
    precision = [r / n if n else 0.0 for r, n in zip(relevant, returned, strict=True)]
    outcome = np.fromiter(map(_CORRECT, found), dtype=bool, count=len(found))
    p = np.fromiter(map(_CONFIDENCE, found), dtype=np.float64, count=len(found))
    p /= MAX_CONFIDENCE
    n_correct = int(outcome.sum())
    o = overconfidence(p, outcome)
    u = underconfidence(p, outcome)
    r_o_value = r_o(o, len(qids) - n_correct)
    r_u_value = r_u(u, n_correct)
    return AcRunScores(
        n_questions=len(qids),
        n_correct=n_correct,
        accuracy=n_correct / len(qids),
        nugget_precision=sum(precision) / len(qids),
        o=o,
        u=u,
        r_o=r_o_value,
        r_u=r_u_value,
        hmr=hmr(r_o_value, r_u_value),
        ece=expected_calibration_error(p, outcome),
        brier=brier_score(p, outcome),
        columns=AcQuestionColumns(
            qids=qids,
            answered=tuple(answer is not _NO_ANSWER for answer in found),
            correct=tuple(outcome.tolist()),
            probability=tuple(p.tolist()),
            relevant_nuggets=tuple(relevant),
            returned_nuggets=tuple(returned),
            nugget_precision=tuple(precision),
        ),
    )


def _probabilities(probabilities: npt.ArrayLike) -> npt.NDArray[np.float64]:
    p = np.asarray(probabilities, dtype=np.float64).ravel()
    if p.size and (not np.all(np.isfinite(p)) or np.min(p) < 0.0 or np.max(p) > 1.0):
        raise ValueError(BAD_PROBABILITY)
    return p


def _probabilities_and_outcomes(
    probabilities: npt.ArrayLike, correct: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    p = _probabilities(probabilities)
    outcome = np.asarray(correct, dtype=bool).ravel()
    if p.shape != outcome.shape:
        raise ValueError(LENGTH_MISMATCH.format(left=p.size, right=outcome.size))
    return p, outcome
