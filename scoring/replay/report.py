"""What a replay found: the numbers that differ, notes, and how many numbers it compared."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Two floats this close are the same number: the replay runs the same code on the same
#: inputs, so only a different BLAS summing in another order may move the last bits.
REL_TOL = 1e-9
ABS_TOL = 1e-12


@dataclass(frozen=True)
class Difference:
    """One number that the archive and the replay disagree on."""

    track: str
    run: str  # "-" for a track-wide number (statistics, qrels)
    measure: str
    archived: Any
    recomputed: Any
    question: str | None = None

    def __str__(self) -> str:
        where = f" question {self.question}" if self.question is not None else ""
        return (f"track {self.track} run {self.run} {self.measure}{where}: archived "
                f"{self.archived!r}, recomputed {self.recomputed!r}")


@dataclass
class ReplayReport:
    manifest_problems: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    numbers: int = 0  # how many archived numbers were compared
    leaderboards: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.manifest_problems and not self.differences


def same(archived: Any, recomputed: Any) -> bool:
    if isinstance(archived, bool) or isinstance(recomputed, bool):
        return archived == recomputed
    if isinstance(archived, int | float) and isinstance(recomputed, int | float):
        return math.isclose(archived, recomputed, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return bool(archived == recomputed)


def flat(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """A JSON value's leaves by path; the HSD's list of pairs keyed by its runs."""
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from flat(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and all(isinstance(v, Mapping) and "a" in v and "b" in v
                                         for v in value) and value:
        for pair in value:
            yield from flat({k: v for k, v in pair.items() if k not in ("a", "b")},
                             f"{prefix}[{pair['a']} vs {pair['b']}]")
    else:
        yield prefix, value
