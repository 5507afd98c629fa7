"""Run a judge over a labelled set and measure it (the figures of `judge_eval`).

Three passes, each timed on its own:
- `entailment`: every entailment item;
- `answer_gold`: every answer item with its gold answers (`answer_check: gold`);
- `answer_nuggets`: every answer item from its nuggets alone (`answer_check: nuggets`).

Per pass: accuracy, Cohen's kappa, the confusion matrix, accuracy per category,
judgments per second (wall clock over the pass), tokens per judgment (prompt and
completion, all its calls together) and how many judgments a rule made without the LLM.
Entailment adds precision and recall of "bogus"; the answer passes add the exact
relevant-set rate: among items a human marked correct with at least one nugget, the
share whose judged relevant set is exactly the human's (an answer judged wrong has an
empty set, so it misses).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from grading.judge import AnswerInput, EntailmentInput, Judge, JudgeInput, JudgeOutcome
from grading.validation.figures import Pair, agreement, by_category
from grading.validation.labelled import AnswerItem, LabelledSet

PASSES = ("entailment", "answer_gold", "answer_nuggets")


@dataclass
class ValidationResult:
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    outcomes: list[dict[str, Any]] = field(default_factory=list)


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
            "decided_by": [] if outcome is None else
            [s["decided_by"] for s in outcome.steps if s["step"] != "relevance"]}


def validate_judge(judge: Judge, labelled: LabelledSet,
                   on_judged: Callable[[], None] | None = None) -> ValidationResult:
    """Judge every item of `labelled` in the three passes and measure the agreement."""
    result = ValidationResult()
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
        result.outcomes += [
            _record(section, i, {"correct": i.correct, "relevant": list(i.relevant)}, o,
                    h is j)
            for i, o, (h, j) in zip(answers, outcomes, pairs, strict=True)]
    return result
