"""A campaign's bar for its judge: the `judge_thresholds` a validation must reach before grading
(docs/judging.md, "Validating the judge")."""

from __future__ import annotations

from typing import Any

from campaign.campaign_file import JUDGE_THRESHOLDS

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
        section, name = JUDGE_THRESHOLDS[key]
        found = figures.get(section, {}).get(name)
        if found is None:
            problems.append(NOT_MEASURED.format(key=key, threshold=threshold))
        elif found < threshold:
            problems.append(UNDER_THRESHOLD.format(key=key, found=f"{found:.3f}",
                                                   threshold=threshold))
    return problems
