"""The variant table from the stored replies: each variant as the pipeline would use it.

A variant's decision on an item is the rule's where the shipped pipeline decides by rule
first (v2 and later), else the judge's probability of "true" against a threshold
(`true_above`). The threshold and the calibration (isotonic, on the confidence of the
verdict given) are fitted on the dev set's other folds for the dev figures, and on the
whole dev set for the held-out figures: no item is scored by a choice made on it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from grading.decisions import shift_to_threshold
from grading.r2c2.entailment_rule import RULE_PRECISION, unsupported
from grading.r2c2.gold_match import gold_verdict
from grading.validation.calibration import expected_calibration_error, fit_isotonic
from grading.validation.labelled import LabelledSet
from judge_accuracy.probes import requests_per_second, stored
from judge_accuracy.variants import Variant

THRESHOLDS = tuple(round(0.05 * step, 2) for step in range(1, 20))
FIELD = {"entailment": "entailed", "gold": "correct", "nuggets": "correct",
         "relevance": "relevant"}


@dataclass(frozen=True)
class Row:
    group: int  # the labelled item's position: folds keep an answer's nuggets together
    category: str
    human: bool
    p_true: float | None
    rule: bool | None = None
    rule_confidence: float = 1.0


def _probabilities(set_name: str, model: str, variant: str) -> dict[tuple[str, int], float]:
    found: dict[tuple[str, int], float] = {}
    for record in stored(set_name, model, variant):
        for field, key in record["keys"].items():
            p = record["p_true"].get(field)
            if p is not None:
                found[(key[0], key[1])] = p
            if field == "relevant" and key[1] < 0 and record.get("relevant_list") is not None:
                # v1's relevant list has no probability: a listed nugget is "true" for sure.
                for num in record["relevant_list"]:
                    found[(key[0], 1000 + int(num))] = 1.0
    return found


def rows(labelled: LabelledSet, model: str, variant: Variant) -> list[Row]:
    """The items a variant answers, with the human label and what decides them."""
    v1 = variant.name.endswith("-v1")
    if variant.subtask == "relevance" and v1:
        return _v1_relevance(labelled, model)
    models = model.split("+")
    tables = [_probabilities(labelled.name, m, variant.name) for m in models]

    def p(key: tuple[str, int]) -> float | None:
        values = [table.get(key) for table in tables]
        known = [v for v in values if v is not None]
        return sum(known) / len(known) if len(known) == len(values) else None

    out: list[Row] = []
    if variant.subtask == "entailment":
        for index, item in enumerate(labelled.entailment):
            ruled = not v1 and bool(unsupported(item.passage, item.nugget))
            out.append(Row(index, item.category, item.entailed, p((item.id, 0)),
                           False if ruled else None, RULE_PRECISION))
        return out
    for index, answer in enumerate(labelled.answers):
        if variant.subtask == "relevance":
            if answer.correct and answer.nuggets:
                out += [Row(index, answer.category, num in answer.relevant, p((answer.id, num)))
                        for num, _ in answer.nuggets]
            continue
        gold = gold_verdict(answer.answer, answer.gold_answers) if (
            variant.subtask == "gold" and not v1) else None
        out.append(Row(index, answer.category, answer.correct, p((answer.id, 0)),
                       None if gold is None else gold.correct))
    return out


def _v1_relevance(labelled: LabelledSet, model: str) -> list[Row]:
    listed = _probabilities(labelled.name, model, "nuggets-v1")
    out = []
    for index, item in enumerate(labelled.answers):
        if item.correct and item.nuggets:
            replied = (item.id, 0) in listed
            out += [Row(index, item.category, num in item.relevant,
                        (1.0 if (item.id, 1000 + num) in listed else 0.0) if replied else None)
                    for num, _ in item.nuggets]
    return out


def decide(row: Row, true_above: float) -> tuple[bool | None, float | None]:
    """(verdict, raw confidence in it) as the pipeline decides the row."""
    if row.rule is not None:
        return row.rule, row.rule_confidence
    if row.p_true is None:
        return None, None
    s = shift_to_threshold(row.p_true, true_above)
    return s >= 0.5, max(s, 1 - s)


def _accuracy(rows_: Sequence[Row], true_above: float) -> float:
    return sum(decide(r, true_above)[0] is r.human for r in rows_) / len(rows_)


def best_threshold(rows_: Sequence[Row]) -> float:
    """The most accurate threshold on `rows_`; of equals, the one nearest 0.5."""
    return max(THRESHOLDS, key=lambda t: (round(_accuracy(rows_, t), 9), -abs(t - 0.5)))


@dataclass
class Scored:
    verdicts: list[bool | None]
    raw: list[float]
    calibrated: list[float]
    thresholds: list[float]


def _score(train: Sequence[Row], test: Sequence[Row], true_above: float | None = None
           ) -> tuple[list[bool | None], list[float], list[float], float]:
    t = best_threshold(train) if true_above is None else true_above
    fit_rows = [(*decide(r, t), r.human) for r in train]
    fit_pairs = [(c, v is h) for v, c, h in fit_rows if c is not None]
    calibration = fit_isotonic([c for c, _ in fit_pairs], [ok for _, ok in fit_pairs])
    verdicts, raw, calibrated = [], [], []
    for r in test:
        verdict, confidence = decide(r, t)
        verdicts.append(verdict)
        raw.append(0.5 if confidence is None else confidence)
        calibrated.append(0.5 if confidence is None else calibration(confidence))
    return verdicts, raw, calibrated, t


def cross_validated(dev: Sequence[Row], folds: int, true_above: float | None = None
                    ) -> tuple[list[Row], Scored]:
    """Every dev row scored by a threshold and calibration fitted on the other folds."""
    order: list[Row] = []
    scored = Scored([], [], [], [])
    for fold in range(folds):
        train = [r for r in dev if r.group % folds != fold]
        test = [r for r in dev if r.group % folds == fold]
        if not test:
            continue
        verdicts, raw, calibrated, t = _score(train, test, true_above)
        order += test
        scored.verdicts += verdicts
        scored.raw += raw
        scored.calibrated += calibrated
        scored.thresholds.append(t)
    return order, scored


def held_out(dev: Sequence[Row], test: Sequence[Row], true_above: float | None = None
             ) -> Scored:
    verdicts, raw, calibrated, t = _score(dev, test, true_above)
    return Scored(verdicts, raw, calibrated, [t])


def figures(rows_: Sequence[Row], scored: Scored) -> dict[str, float | None]:
    agreed = [v is r.human for v, r in zip(scored.verdicts, rows_, strict=True)]
    recalls = []
    for label in (True, False):
        these = [ok for ok, r in zip(agreed, rows_, strict=True) if r.human is label]
        if these:
            recalls.append(sum(these) / len(these))
    exact: dict[int, bool] = {}
    for ok, r in zip(agreed, rows_, strict=True):
        exact[r.group] = exact.get(r.group, True) and ok
    return {
        "n": len(rows_),
        "accuracy": sum(agreed) / len(agreed),
        "balanced": sum(recalls) / len(recalls),
        "ece_raw": expected_calibration_error(scored.raw, agreed),
        "ece_cal": expected_calibration_error(scored.calibrated, agreed),
        "called_true": sum(v is True for v in scored.verdicts) / len(rows_),
        "human_true": sum(r.human for r in rows_) / len(rows_),
        "exact_sets": sum(exact.values()) / len(exact),
        "true_above": sum(scored.thresholds) / len(scored.thresholds),
    }


def by_category(rows_: Sequence[Row], scored: Scored) -> dict[str, float]:
    counts: dict[str, list[int]] = {}
    for v, r in zip(scored.verdicts, rows_, strict=True):
        c = counts.setdefault(r.category, [0, 0])
        c[0] += v is r.human
        c[1] += 1
    return {k: c[0] / c[1] for k, c in sorted(counts.items())}


def judgments_per_second(labelled: LabelledSet, model: str, variant: Variant,
                         rows_: Sequence[Row]) -> float | None:
    """Judgments per second of wall clock: the requests the variant needed, at the rate
    its collection ran; a rule's decision costs nothing."""
    rates = [requests_per_second(labelled.name, m, variant.name.replace(
        "relevance-v1", "nuggets-v1")) for m in model.split("+")]
    if any(rate is None for rate in rates):
        return None
    requests = sum(1 for record in stored(labelled.name, model.split("+")[0],
                                          variant.name.replace("relevance-v1", "nuggets-v1")))
    seconds = sum(requests / rate for rate in rates if rate)
    judged = len({r.group for r in rows_})
    return judged / seconds if seconds else None


def sampled_accuracy(rows_: Sequence[Row], k: int = 3) -> float:
    """Expected accuracy of the majority of `k` replies sampled at temperature 1: each a
    draw of "true" with the judge's probability (no threshold; a rule decides as ever)."""
    total = 0.0
    for r in rows_:
        if r.rule is not None:
            total += r.rule is r.human
        elif r.p_true is not None:
            p = r.p_true
            majority_true = sum(math.comb(k, j) * p ** j * (1 - p) ** (k - j)
                                for j in range(k // 2 + 1, k + 1))
            total += majority_true if r.human else 1 - majority_true
    return total / len(rows_)


def _line(name: str, f: dict[str, float | None], rate: float | None) -> str:
    def n(value: float | None, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"
    return (f"  {name:<38} {n(f['accuracy'])} {n(f['balanced'])} {n(f['exact_sets'])} "
            f"{n(f['called_true'], 2)}/{n(f['human_true'], 2)} {n(f['true_above'], 2)} "
            f"{n(f['ece_raw'])} {n(f['ece_cal'])} {n(rate, 2)}")


def _asked(rows_: Sequence[Row]) -> bool:
    """Whether the model was asked about these rows (some that no rule decides)."""
    return any(r.p_true is not None for r in rows_ if r.rule is None)


def report(models: Sequence[str], variants: Sequence[Variant], sets: Sequence[LabelledSet],
           folds: int) -> str:
    dev, rest = sets[0], sets[1:]
    configurations = list(models) + (["+".join(models)] if len(models) > 1 else [])
    lines = [f"Judge variants on {dev.name} ({folds}-fold cross-validated)"
             + "".join(f" and on {s.name} (fitted on the whole dev set)" for s in rest)]
    header = ("  variant (model)                        acc   bal   exact called/human "
              "t_above ece_raw ece_cal j/s")
    details: dict[str, object] = {}
    for subtask in ("entailment", "gold", "nuggets", "relevance"):
        chosen = [v for v in variants if v.subtask == subtask]
        if subtask == "relevance" and any(v.name == "nuggets-v1" for v in variants):
            chosen = [Variant("relevance-v1", "relevance", lambda item: [],
                              "v1: the relevant list of the nuggets check's reply"), *chosen]
        for labelled in sets:
            lines += ["", f"{subtask} on {labelled.name}", header]
            for variant in chosen:
                for model in configurations:
                    if variant.name.endswith("-v1") and "+" in model:
                        continue
                    dev_rows = rows(dev, model, variant)
                    if not _asked(dev_rows):
                        continue
                    if labelled is dev:
                        these, scored = cross_validated(dev_rows, folds)
                    else:
                        these = rows(labelled, model, variant)
                        if not _asked(these):
                            continue
                        scored = held_out(dev_rows, these)
                    f = figures(these, scored)
                    name = f"{variant.name} ({model.replace('qwen2.5-coder-', '')})"
                    rate = judgments_per_second(labelled, model, variant, these)
                    lines.append(_line(name, f, rate))
                    if not variant.name.endswith("-v1") and "+" not in model:
                        lines.append(f"    3 samples at temperature 1, majority (expected): "
                                     f"accuracy {sampled_accuracy(these):.3f}, "
                                     f"{rate / 3 if rate else 0:.2f} j/s")
                    details[f"{labelled.name} {name}"] = {
                        **f, "by_category": by_category(these, scored)}
    lines += ["", "Accuracy per category:"]
    lines += [f"  {key}: {json.dumps(value['by_category'])}"  # type: ignore[index]
              for key, value in details.items()]
    return "\n".join(lines)
