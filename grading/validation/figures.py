"""How well a judge agrees with human labels: accuracy, Cohen's kappa, the confusion matrix,
precision and recall over (human, judge) pairs (docs/judging.md, "Validating the judge")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Pair = tuple[bool, bool | None]  # (human label, judge label or None)


@dataclass(frozen=True)
class Agreement:
    items: int
    agreed: int
    unanswered: int
    kappa: float | None
    confusion: dict[str, int]  # "human_<h>_judge_<j>" with h, j in true/false/none

    @property
    def accuracy(self) -> float | None:
        return self.agreed / self.items if self.items else None

    def precision_recall(self, of: bool) -> tuple[float | None, float | None]:
        """Precision and recall of the judge saying `of` (e.g. False: "bogus")."""
        said = self.confusion[_cell(True, of)] + self.confusion[_cell(False, of)]
        right = self.confusion[_cell(of, of)]
        truly = sum(count for key, count in self.confusion.items()
                    if key.startswith(f"human_{_word(of)}_"))
        return (right / said if said else None, right / truly if truly else None)

    def as_json(self, bogus: bool = False) -> dict[str, Any]:
        figures: dict[str, Any] = {"items": self.items, "accuracy": self.accuracy,
                                   "kappa": self.kappa, "unanswered": self.unanswered,
                                   "confusion": self.confusion}
        if bogus:
            figures["bogus_precision"], figures["bogus_recall"] = self.precision_recall(False)
        return figures


def _word(value: bool | None) -> str:
    return "none" if value is None else "true" if value else "false"


def _cell(human: bool, judge: bool | None) -> str:
    return f"human_{_word(human)}_judge_{_word(judge)}"


def agreement(pairs: Sequence[Pair]) -> Agreement:
    """Accuracy, kappa and confusion of the judge against the human over `pairs`."""
    confusion = {_cell(h, j): 0 for h in (True, False) for j in (True, False, None)}
    for human, judge in pairs:
        confusion[_cell(human, judge)] += 1
    items = len(pairs)
    agreed = sum(1 for human, judge in pairs if judge is human)
    return Agreement(items=items, agreed=agreed,
                     unanswered=sum(1 for _, judge in pairs if judge is None),
                     kappa=cohen_kappa(pairs), confusion=confusion)


def cohen_kappa(pairs: Sequence[Pair]) -> float | None:
    """Cohen's kappa of two raters over yes/no labels; a missing label is neither yes
    nor no, so it lowers the observed agreement and neither side's chance rate."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for human, judge in pairs if judge is human) / n
    human_yes = sum(1 for human, _ in pairs if human) / n
    judge_yes = sum(1 for _, judge in pairs if judge is True) / n
    judge_no = sum(1 for _, judge in pairs if judge is False) / n
    chance = human_yes * judge_yes + (1 - human_yes) * judge_no
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def by_category(categories: Sequence[str], pairs: Sequence[Pair]) -> dict[str, dict[str, Any]]:
    """Items and accuracy per category, in the order categories first appear."""
    grouped: dict[str, list[Pair]] = {}
    for category, pair in zip(categories, pairs, strict=True):
        grouped.setdefault(category, []).append(pair)
    return {category: {"items": len(group), "accuracy": agreement(group).accuracy}
            for category, group in grouped.items()}
