"""A campaign's bar for its judge: the thresholds a validation must reach before grading.

Organisers set them in the campaign file:

    judge_thresholds:
      entailment_accuracy: 0.95
      answer_gold_accuracy: 0.95
      answer_gold_exact_relevant_set: 0.75

Each key names a pass of the validation (grading/validation/runner.py) and a figure of
it. With any set, `grade` runs only when the latest validation of the official judge,
under the prompt versions in use now, reaches every one.
"""

from __future__ import annotations

from typing import Any

THRESHOLDS: dict[str, tuple[str, str]] = {
    "entailment_accuracy": ("entailment", "accuracy"),
    "entailment_kappa": ("entailment", "kappa"),
    "bogus_recall": ("entailment", "bogus_recall"),
    "answer_gold_accuracy": ("answer_gold", "accuracy"),
    "answer_gold_exact_relevant_set": ("answer_gold", "exact_relevant_set"),
    "answer_nuggets_accuracy": ("answer_nuggets", "accuracy"),
    "answer_nuggets_exact_relevant_set": ("answer_nuggets", "exact_relevant_set"),
}

UNDER_THRESHOLD = "{key}: {found} is under the campaign's threshold {threshold}"
NOT_MEASURED = "{key}: not measured (the set has no items for it), threshold {threshold}"
NO_VALIDATION = (
    "campaign {slug} requires a validated judge, and {model} has no validation under the "
    "prompt versions in use ({versions}): run `python manage.py judge_eval {slug}`"
)
VALIDATION_FAILED = (
    "campaign {slug} requires a validated judge, and the latest validation of {model} "
    "(#{id}, {when}) failed: {failures}"
)


def failures(figures: dict[str, dict[str, Any]], thresholds: dict[str, float]) -> list[str]:
    """Which thresholds `figures` miss, one message each (empty: it passes)."""
    problems = []
    for key, threshold in thresholds.items():
        section, name = THRESHOLDS[key]
        found = figures.get(section, {}).get(name)
        if found is None:
            problems.append(NOT_MEASURED.format(key=key, threshold=threshold))
        elif found < threshold:
            problems.append(UNDER_THRESHOLD.format(key=key, found=f"{found:.3f}",
                                                   threshold=threshold))
    return problems
