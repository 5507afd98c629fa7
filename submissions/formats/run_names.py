"""R2C2 run names: ``[Team]-{PG|PO}-[n]`` for PR runs, ``[Team]-AC-[n]`` for AC runs
(docs/formats.md, "Run names")."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The team part may hold '-' itself (NTT-DOCOMO-PG-1); the type and number anchor the end.
# n has no leading zero, so WASEDA-PG-01 cannot pass for a second WASEDA-PG-1. No control
# characters: `\s` leaves out NUL and most others.
TEAM_PART = r"(?P<team>[^\s;:/\\\x00-\x1f\x7f-\x9f]{1,64})"
RUN_NAME_RE = re.compile(TEAM_PART + r"-(?P<type>PG|PO|AC)-(?P<n>[1-9][0-9]{0,5})")
KIND_OF_TYPE = {"PG": "pr", "PO": "pr", "AC": "ac"}


@dataclass(frozen=True)
class RunName:
    """A parsed run name: the team, the run type (PG, PO or AC) and the number n."""

    team: str
    run_type: str
    number: int

    @property
    def kind(self) -> str:
        """The track kind the name belongs to: 'pr' or 'ac'."""
        return KIND_OF_TYPE[self.run_type]

    def __str__(self) -> str:
        return f"{self.team}-{self.run_type}-{self.number}"


def is_pr_run_name(name: str) -> bool:
    """True if `name` is a PR run name, ``[Team]-PG-[n]`` or ``[Team]-PO-[n]``."""
    run_name = parse_run_name(name)
    return run_name is not None and run_name.kind == "pr"


def parse_run_name(name: str) -> RunName | None:
    """The parts of a well-formed run name, or None."""
    match = RUN_NAME_RE.fullmatch(name)
    if match is None:
        return None
    return RunName(team=match["team"], run_type=match["type"], number=int(match["n"]))
