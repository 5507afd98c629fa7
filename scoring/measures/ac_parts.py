"""R_O, R_U, HMR and accuracy from sums of per-question parts (c, (1 - c) p, c (1 - p)), so
that the randomised Tukey HSD can test them though they are no means over questions
(docs/statistics.md). The formulas are ac.py's, on arrays."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: What the parts are made from: the per-question measures a snapshot stores.
INPUTS = ("correct", "confidence")


def calibration_parts(correct: FloatArray, confidence: FloatArray) -> FloatArray:
    """parts x questions x runs: c, (1 - c) p and c (1 - p), from question x run
    matrices of c (0 or 1) and p (0..1)."""
    return np.stack([correct, (1.0 - correct) * confidence, correct * (1.0 - confidence)])


def _ratios(sums: FloatArray, n_questions: int) -> tuple[FloatArray, FloatArray]:
    """R_O and R_U per run from the parts' sums over `n_questions` questions."""
    n_correct, o, u = sums[0], sums[1], sums[2]
    n_incorrect = n_questions - n_correct
    # np.maximum(..., 1): the divisor where the set is empty, whose ratio is 1 anyway.
    r_o = np.where(n_incorrect == 0, 1.0, 1.0 - o / np.maximum(n_incorrect, 1))
    r_u = np.where(n_correct == 0, 1.0, 1.0 - u / np.maximum(n_correct, 1))
    return r_o, r_u


def r_o_of_sums(sums: FloatArray, n_questions: int) -> FloatArray:
    """R_O = 1 - O / |I-| per run, 1 where I- is empty."""
    return _ratios(sums, n_questions)[0]


def r_u_of_sums(sums: FloatArray, n_questions: int) -> FloatArray:
    """R_U = 1 - U / |I+| per run, 1 where I+ is empty."""
    return _ratios(sums, n_questions)[1]


def hmr_of_sums(sums: FloatArray, n_questions: int) -> FloatArray:
    """HMR = 2 R_O R_U / (R_O + R_U) per run, 0 where both are 0."""
    r_o, r_u = _ratios(sums, n_questions)
    total = r_o + r_u
    return np.where(total == 0, 0.0, 2.0 * r_o * r_u / np.where(total == 0, 1.0, total))


def accuracy_of_sums(sums: FloatArray, n_questions: int) -> FloatArray:
    """Correct answers / N per run."""
    return sums[0] / n_questions


@dataclass(frozen=True)
class FromParts:
    """How a run-level measure is tested: the per-question measures it reads (`inputs`),
    the parts made from their matrices, and the measure from the parts' sums."""

    inputs: tuple[str, ...]
    parts: Callable[..., FloatArray]
    of_sums: Callable[[FloatArray, int], FloatArray]

    def matrices(self, per_question: Mapping[str, FloatArray]) -> FloatArray:
        """parts x questions x runs, from question x run matrices of the inputs."""
        return self.parts(*(per_question[key] for key in self.inputs))

    def statistic(self, n_questions: int) -> Callable[[FloatArray], FloatArray]:
        """The measure from the parts' sums, as the HSD takes it."""
        return partial(_of_sums, self.of_sums, n_questions)


def _of_sums(of_sums: Callable[[FloatArray, int], FloatArray], n_questions: int,
             sums: FloatArray) -> FloatArray:
    return of_sums(sums, n_questions)


def _from_calibration(of_sums: Callable[[FloatArray, int], FloatArray]) -> FromParts:
    return FromParts(inputs=INPUTS, parts=calibration_parts, of_sums=of_sums)


HMR = _from_calibration(hmr_of_sums)
R_O = _from_calibration(r_o_of_sums)
R_U = _from_calibration(r_u_of_sums)
ACCURACY = _from_calibration(accuracy_of_sums)
