"""Which judgments may stand without a person: a confidence threshold with a guarantee, by
fixed-sequence testing ("Trust or Escalate", Jung et al., ICLR 2025; docs/agreement.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import binom, binomtest

Verdict = tuple[float, bool]  # (the judge's confidence, whether people agreed with it)

# How far the smallest sample that could pass is searched, for "how many more labels".
MAX_SAMPLE = 100_000


@dataclass(frozen=True)
class Test:
    """One threshold tried: the sampled judgments at or above it and how they fared."""

    threshold: float
    n: int
    disagreements: int
    p_value: float
    passed: bool


@dataclass(frozen=True)
class Threshold:
    """The lowest threshold that passed (None: nothing may be accepted) and why."""

    value: float | None
    tests: tuple[Test, ...]
    reason: str
    # Where none passed: about how many more sampled labels would let one pass, if the
    # judge keeps agreeing as often as it did (None: no sample size would).
    more_labels: int | None = None


def smallest_passing_sample(target: float, risk: float) -> int:
    """The fewest sampled judgments that can show `target` at `risk`: all agreeing, and
    target**n <= risk (22 for 0.9 at 0.1)."""
    return math.ceil(math.log(risk) / math.log(target) - 1e-12)


def disagreement_p_value(n: int, disagreements: int, target: float) -> float:
    """One-sided exact binomial test: the chance of so few disagreements in `n` if the
    judge disagreed with people as often as 1 - target allows."""
    return float(binom.cdf(disagreements, n, 1 - target))


def clopper_pearson(agreed: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of an agreement rate."""
    interval = binomtest(agreed, n).proportion_ci(confidence_level=level, method="exact")
    return float(interval.low), float(interval.high)


def _more_labels(n: int, disagreements: int, target: float, risk: float) -> int | None:
    rate = disagreements / n if n else 0.0
    if 1 - rate <= target:
        return None
    for size in range(n, MAX_SAMPLE):
        if disagreement_p_value(size, math.floor(size * rate), target) <= risk:
            return size - n
    return None


def choose_threshold(verdicts: Sequence[Verdict], *, target: float,
                     risk: float) -> Threshold:
    """Test thresholds from the highest sampled confidence down, stopping at the first
    that fails; the lowest that passed is the one to accept at."""
    needed = smallest_passing_sample(target, risk)
    goal = f"{target:g} agreement at risk {risk:g}"
    if len(verdicts) < needed:
        return Threshold(None, (), (
            f"sample too small for {goal}: need >= {needed} agreeing labelled items above "
            f"a threshold, {len(verdicts)} labelled"), more_labels=needed - len(verdicts))
    tests: list[Test] = []
    chosen = None
    for threshold in sorted({confidence for confidence, _ in verdicts}, reverse=True):
        above = [agrees for confidence, agrees in verdicts if confidence >= threshold]
        if len(above) < needed:
            continue  # too few to pass whatever people said: not a test
        disagreements = above.count(False)
        p_value = disagreement_p_value(len(above), disagreements, target)
        tests.append(Test(threshold, len(above), disagreements, p_value, p_value <= risk))
        if p_value > risk:
            break
        chosen = threshold
    if chosen is not None:
        accepted = next(test for test in tests if test.threshold == chosen)
        return Threshold(chosen, tuple(tests), (
            f"{accepted.n} sampled judgments at confidence >= {chosen:.3f} disagree with "
            f"people {accepted.disagreements} time(s): {goal} holds above it"))
    first = tests[0]
    more = _more_labels(first.n, first.disagreements, target, risk)
    if len({confidence for confidence, _ in verdicts}) == 1:
        why = (f"the judge's confidence is the same for every sampled judgment, so it "
               f"cannot tell which to trust; they disagree with people {first.disagreements}"
               f" time(s) in {first.n}, too many to show {goal}")
    else:
        why = (f"the {first.n} sampled judgments at confidence >= {first.threshold:.3f} (the "
               f"highest threshold with {needed} labels or more at or above it) disagree "
               f"with people {first.disagreements} time(s): too many to show {goal}")
    if more is None:
        why += "; at this rate of disagreement no sample size would"
    else:
        why += f"; about {more} more labelled items at this rate would"
    return Threshold(None, tuple(tests), why, more_labels=more)
