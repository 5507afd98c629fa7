"""Confidence that means what it says: fit a map from the judge's raw confidence to the share
of such labels people agree with, and measure the gap
(docs/judging.md, "How sure the judge is: calibration")."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression, minimize

#: Confidences are kept this far from 0 and 1 before a logit.
_EDGE = 1e-6


@dataclass(frozen=True)
class Isotonic:
    """A non-decreasing step function: below `thresholds[0]` it is `values[0]`; from
    `thresholds[i]` on, `values[i]`."""

    thresholds: tuple[float, ...]
    values: tuple[float, ...]

    def __call__(self, confidence: float) -> float:
        index = int(np.searchsorted(self.thresholds, confidence, side="right")) - 1
        return self.values[max(index, 0)]


@dataclass(frozen=True)
class Platt:
    """p = 1 / (1 + exp(-(a * logit(confidence) + b)))."""

    a: float
    b: float

    def __call__(self, confidence: float) -> float:
        return _sigmoid(self.a * _logit(confidence) + self.b)


Calibration = Callable[[float], float]


def fit_isotonic(confidences: Sequence[float], agreed: Sequence[bool]) -> Isotonic:
    """The isotonic fit; equal confidences are pooled first, so each gets one value."""
    _check(confidences, agreed)
    levels: dict[float, list[int]] = {}
    for confidence, ok in zip(confidences, agreed, strict=True):
        counts = levels.setdefault(float(confidence), [0, 0])
        counts[0] += int(ok)
        counts[1] += 1
    xs = sorted(levels)
    fitted = isotonic_regression([levels[x][0] / levels[x][1] for x in xs],
                                 weights=[levels[x][1] for x in xs]).x
    return Isotonic(thresholds=tuple(xs), values=tuple(float(v) for v in fitted))


def fit_platt(confidences: Sequence[float], agreed: Sequence[bool]) -> Platt:
    """The Platt fit, by maximum likelihood from a = 1, b = 0 (the identity)."""
    _check(confidences, agreed)
    z = np.array([_logit(c) for c in confidences])
    y = np.array([float(ok) for ok in agreed])

    def loss(params: np.ndarray) -> float:
        s = params[0] * z + params[1]
        # log(1 + e^s) - y * s, written so that large |s| does not overflow.
        return float(np.sum(np.logaddexp(0.0, s) - y * s))

    found = minimize(loss, x0=np.array([1.0, 0.0]), method="BFGS")
    return Platt(a=float(found.x[0]), b=float(found.x[1]))


def expected_calibration_error(confidences: Sequence[float], agreed: Sequence[bool],
                               bins: int = 10) -> float:
    """Sum over equal-width bins of (items in bin / n) x |mean confidence - accuracy|;
    a confidence of exactly 1 falls in the last bin."""
    _check(confidences, agreed)
    total = 0.0
    for index in range(bins):
        members = [(c, ok) for c, ok in zip(confidences, agreed, strict=True)
                   if min(int(c * bins), bins - 1) == index]
        if members:
            mean = sum(c for c, _ in members) / len(members)
            accuracy = sum(ok for _, ok in members) / len(members)
            total += len(members) / len(confidences) * abs(mean - accuracy)
    return total


def out_of_fold(confidences: Sequence[float], agreed: Sequence[bool], *, folds: int,
                fit: Callable[[Sequence[float], Sequence[bool]], Calibration]) -> list[float]:
    """Each item's calibrated confidence from a fit on the other folds (item i is in
    fold i mod `folds`, so a labelled set in a fixed order gives fixed folds)."""
    _check(confidences, agreed)
    if not 2 <= folds <= len(confidences):
        raise ValueError(f"folds must be from 2 to the number of items ({len(confidences)})")
    calibrated = [0.0] * len(confidences)
    for fold in range(folds):
        train = [i for i in range(len(confidences)) if i % folds != fold]
        calibration = fit([confidences[i] for i in train], [agreed[i] for i in train])
        for i in range(fold, len(confidences), folds):
            calibrated[i] = calibration(confidences[i])
    return calibrated


def _check(confidences: Sequence[float], agreed: Sequence[bool]) -> None:
    if len(confidences) != len(agreed) or not confidences:
        raise ValueError("expected as many outcomes as confidences, at least one")
    if any(not 0.0 <= c <= 1.0 for c in confidences):
        raise ValueError("expected confidences from 0 to 1")


def _logit(p: float) -> float:
    p = min(max(p, _EDGE), 1.0 - _EDGE)
    return math.log(p / (1.0 - p))


def _sigmoid(s: float) -> float:
    return 1.0 / (1.0 + math.exp(-s)) if s >= 0 else math.exp(s) / (1.0 + math.exp(s))


# --- A judge's calibration: one fit per subtask step ------------------------------------

#: What a stored step's confidence is fitted on: a step of a judgment (grading/judge.py).
StepSample = tuple[str, str, float, bool]  # (step, decision, raw confidence, agreed)


@dataclass(frozen=True)
class StepFit:
    """The calibration of one subtask: the wording and threshold it was fitted under
    (`decision`, e.g. "gold-v2@0.8"), how many labelled steps it saw, and the fit."""

    decision: str
    items: int
    fit: Isotonic


@dataclass(frozen=True)
class JudgeCalibration:
    """Per subtask step, the map from a judge's raw confidence to the share of such
    verdicts people agree with; `source` says where it was fitted."""

    steps: dict[str, StepFit]
    source: str

    def step(self, step: str, decision: str, confidence: float) -> float | None:
        """A step's calibrated confidence; None where no fit was made under `decision`."""
        fitted = self.steps.get(step)
        if fitted is None or fitted.decision != decision:
            return None
        return fitted.fit(confidence)

    def as_json(self) -> dict[str, object]:
        return {"source": self.source, "steps": {
            name: {"decision": s.decision, "items": s.items,
                   "thresholds": list(s.fit.thresholds), "values": list(s.fit.values)}
            for name, s in sorted(self.steps.items())}}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> JudgeCalibration:
        steps = data.get("steps")
        assert isinstance(steps, dict)
        return cls(source=str(data.get("source", "")), steps={
            name: StepFit(decision=s["decision"], items=int(s["items"]),
                          fit=Isotonic(tuple(s["thresholds"]), tuple(s["values"])))
            for name, s in steps.items()})


def step_confidence(calibration: JudgeCalibration | None,
                    step: Mapping[str, Any]) -> float | None:
    """A judgment step's calibrated confidence: a rule's is its own (its measured
    precision); a judge call's goes through the fit for its step and wording; None
    where either is missing."""
    confidence = step.get("confidence")
    if confidence is None:
        return None
    if step.get("decided_by") != "llm":
        return float(confidence)
    if calibration is None:
        return None
    decision = step.get("decision") or step.get("prompt_version", "")
    return calibration.step(step["step"], decision, confidence)


def judgment_confidence(calibration: JudgeCalibration | None,
                        steps: Sequence[Mapping[str, Any]]) -> float | None:
    """A judgment's calibrated confidence: its least sure step's; None unless every
    step has one."""
    values = [step_confidence(calibration, step) for step in steps]
    if not values or any(value is None for value in values):
        return None
    return min(value for value in values if value is not None)


def fit_judge(samples: Sequence[StepSample], *, source: str) -> JudgeCalibration:
    """An isotonic fit per (step, decision) of `samples`; where a step was seen under
    several decisions, the most frequent one is fitted."""
    grouped: dict[str, dict[str, list[tuple[float, bool]]]] = {}
    for step, decision, confidence, agreed in samples:
        grouped.setdefault(step, {}).setdefault(decision, []).append((confidence, agreed))
    steps = {}
    for step, by_decision in grouped.items():
        decision, pairs = max(by_decision.items(), key=lambda kv: len(kv[1]))
        steps[step] = StepFit(decision=decision, items=len(pairs), fit=fit_isotonic(
            [c for c, _ in pairs], [ok for _, ok in pairs]))
    return JudgeCalibration(steps=steps, source=source)


#: The packaged models' calibrations, fitted on the project's dev set by
#: `bench/bench_judge.py --accuracy --write-calibrations`.
PACKAGED_CALIBRATIONS = Path(__file__).with_name("calibrations.json")


def packaged_calibration(judge_model: str) -> JudgeCalibration | None:
    """The calibration shipped for a packaged model, if any."""
    try:
        shipped = json.loads(PACKAGED_CALIBRATIONS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    data = shipped.get(judge_model)
    return JudgeCalibration.from_json(data) if data else None
