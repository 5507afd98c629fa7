"""Run a judge over a labelled set in three passes and measure it: the figures of `judge_eval`
(docs/judging.md, "Validating the judge")."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from grading.judge import AnswerInput, EntailmentInput, Judge, JudgeInput, JudgeOutcome
from grading.llm.subtasks import SUBTASKS
from grading.validation.calibration import (
    JudgeCalibration,
    StepSample,
    expected_calibration_error,
    fit_judge,
    judgment_confidence,
)
from grading.validation.figures import Pair, agreement, by_category
from grading.validation.labelled import AnswerItem, LabelledSet

PASSES = ("entailment", "answer_gold", "answer_nuggets")


#: Folds of the out-of-fold calibration (an item is in fold: its position mod FOLDS).
FOLDS = 5


@dataclass
class ValidationResult:
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    calibration: JudgeCalibration | None = None


@dataclass(frozen=True)
class _Judged:
    """One judgment of a pass, with what calibrating it needs."""

    section: str
    position: int  # the item's place in the labelled set: its fold
    human: dict[str, Any]
    outcome: JudgeOutcome | None
    agreed: bool


def answer_input(item: AnswerItem, check: str) -> AnswerInput:
    """The judge's input for a labelled answer item, checked against its gold answers
    (`check` "gold") or from its nuggets alone ("nuggets")."""
    return AnswerInput(question=item.question, answer=item.answer, nuggets=item.nuggets,
                       answer_check=check,
                       gold_answers=item.gold_answers if check == "gold" else ())


def _judged(judge: Judge, inputs: Sequence[JudgeInput],
            on_judged: Callable[[], None] | None) -> tuple[list[JudgeOutcome | None], float]:
    started = time.perf_counter()
    outcomes = judge.judge_many(inputs, on_judged=on_judged)
    seconds = time.perf_counter() - started
    # A call that failed outright has no verdict: it counts as a miss.
    return [o if isinstance(o, JudgeOutcome) else None for o in outcomes], seconds


def _cost(outcomes: Sequence[JudgeOutcome | None], seconds: float) -> dict[str, Any]:
    done = [o for o in outcomes if o is not None]
    tokens = [(o.prompt_tokens or 0) + (o.completion_tokens or 0) for o in done]
    by_rule = sum(1 for o in done if o.steps and all(
        s["decided_by"].startswith("rule:") for s in o.steps if s["step"] != "relevance"))
    return {
        "seconds": seconds,
        "judgments_per_second": len(outcomes) / seconds if seconds > 0 else None,
        "tokens_per_judgment": sum(tokens) / len(tokens) if tokens else None,
        "decided_by_rule": by_rule,
    }


def _verdict(outcome: JudgeOutcome | None, field_name: str) -> bool | None:
    if outcome is None or outcome.label is None:
        return None
    value = outcome.label.get(field_name)
    return value if isinstance(value, bool) else None


def _record(section: str, item: Any, human: dict[str, Any], outcome: JudgeOutcome | None,
            agreed: bool) -> dict[str, Any]:
    return {"pass": section, "id": item.id, "category": item.category, "human": human,
            "judge": None if outcome is None else outcome.label, "agreed": agreed,
            "confidence": None if outcome is None else outcome.confidence,
            # Through the calibration the judge graded with (None: it had none).
            "calibrated_confidence": None if outcome is None else outcome.calibrated_confidence,
            "decided_by": [] if outcome is None else
            [s["decided_by"] for s in outcome.steps if s["step"] != "relevance"]}


def validate_judge(judge: Judge, labelled: LabelledSet,
                   on_judged: Callable[[], None] | None = None) -> ValidationResult:
    """Judge every item of `labelled` in the three passes and measure the agreement."""
    result = ValidationResult()
    judged: list[_Judged] = []
    position = {item.id: index for index, item in enumerate(labelled.items)}
    entailment = labelled.entailment
    if entailment:
        outcomes, seconds = _judged(judge, [EntailmentInput(passage=i.passage, nugget=i.nugget)
                                            for i in entailment], on_judged)
        pairs: list[Pair] = [(i.entailed, _verdict(o, "entailed"))
                             for i, o in zip(entailment, outcomes, strict=True)]
        result.figures["entailment"] = {
            **agreement(pairs).as_json(bogus=True),
            "by_category": by_category([i.category for i in entailment], pairs),
            **_cost(outcomes, seconds)}
        judged += [_Judged("entailment", position[i.id], {"entailed": i.entailed}, o, h is j)
                   for i, o, (h, j) in zip(entailment, outcomes, pairs, strict=True)]
        result.outcomes += [_record("entailment", i, {"entailed": i.entailed}, o, h is j)
                            for i, o, (h, j) in zip(entailment, outcomes, pairs, strict=True)]
    answers = labelled.answers
    for section, check in (("answer_gold", "gold"), ("answer_nuggets", "nuggets")):
        if not answers:
            break
        outcomes, seconds = _judged(judge, [answer_input(i, check) for i in answers], on_judged)
        pairs = [(i.correct, _verdict(o, "correct"))
                 for i, o in zip(answers, outcomes, strict=True)]
        sets = [(i, o) for i, o in zip(answers, outcomes, strict=True)
                if i.correct and i.nuggets]
        exact = sum(1 for i, o in sets if o is not None and o.label is not None
                    and o.label.get("correct") is True
                    and tuple(o.label.get("relevant", [])) == i.relevant)
        result.figures[section] = {
            **agreement(pairs).as_json(),
            "relevant_sets": len(sets),
            "exact_relevant_set": exact / len(sets) if sets else None,
            "by_category": by_category([i.category for i in answers], pairs),
            **_cost(outcomes, seconds)}
        judged += [_Judged(section, position[i.id],
                           {"correct": i.correct, "relevant": list(i.relevant)}, o, h is j)
                   for i, o, (h, j) in zip(answers, outcomes, pairs, strict=True)]
        result.outcomes += [
            _record(section, i, {"correct": i.correct, "relevant": list(i.relevant)}, o,
                    h is j)
            for i, o, (h, j) in zip(answers, outcomes, pairs, strict=True)]
    _calibrate(result, judged, source=f"{labelled.name} (sha256 {labelled.sha256[:12]})")
    return result


def _step_samples(judged: _Judged) -> list[StepSample]:
    """The judge's calls in one judgment, each with whether people agree with it: a
    relevance call only where the human marked the answer correct (else no nugget is
    relevant, and the call was made because the judge was wrong about the answer)."""
    samples: list[StepSample] = []
    if judged.outcome is None:
        return samples
    for step in judged.outcome.steps:
        name, verdict, confidence = step["step"], step.get("verdict"), step.get("confidence")
        if step["decided_by"] != "llm" or name not in SUBTASKS or confidence is None \
                or not isinstance(verdict, bool):
            continue
        if name == "relevance":
            if not judged.human.get("correct"):
                continue
            truth = step.get("nugget") in judged.human["relevant"]
        else:
            truth = judged.human["entailed" if name == "entailment" else "correct"]
        samples.append((name, step["decision"], float(confidence), verdict is truth))
    return samples


def _calibrate(result: ValidationResult, judged: list[_Judged], *, source: str) -> None:
    """Fit the judge's calibration on every item, give each judgment an out-of-fold calibrated
    confidence (`refit_confidence`), and add the ECE per pass: raw, as graded, and refitted."""
    each = [_step_samples(one) for one in judged]
    samples = [sample for mine in each for sample in mine]
    if not samples:
        return
    result.calibration = fit_judge(samples, source=source)
    calibrated: list[float | None] = [None] * len(judged)
    for fold in range(FOLDS):
        train = [s for one, mine in zip(judged, each, strict=True)
                 if one.position % FOLDS != fold for s in mine]
        if not train:
            continue
        fitted = fit_judge(train, source=source)
        for index, one in enumerate(judged):
            if one.position % FOLDS == fold and one.outcome is not None \
                    and one.outcome.label is not None:
                calibrated[index] = judgment_confidence(fitted, one.outcome.steps)
    for record, value in zip(result.outcomes, calibrated, strict=True):
        record["refit_confidence"] = value
    for section, figures in result.figures.items():
        records = [r for r in result.outcomes if r["pass"] == section]
        for name, key in (("ece_raw", "confidence"), ("ece_calibrated", "calibrated_confidence"),
                          ("ece_refit", "refit_confidence")):
            pairs = [(r[key], r["agreed"]) for r in records if r[key] is not None]
            figures[name] = expected_calibration_error(
                [c for c, _ in pairs], [ok for _, ok in pairs]) if pairs else None
            figures[f"{name}_items"] = len(pairs)
