"""The `phases:` of a campaign file: its deadlines, in time order (docs/campaign-file.md,
"Phases"); the model checks the same order on what the admin edits."""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

from campaign.campaign_file.fields import Timestamp
from campaign.campaign_file.problems import SECTION
from campaign.campaign_file.sections import Section

PHASE_KEYS = ("topics_release", "pr_due", "ac_due", "results_release")
#: Required only while the campaign has a pr or ac track (or its tracks cannot be read): a
#: campaign of ranking/response tracks only has each track's own due.
R2C2_PHASE_KEYS = ("pr_due", "ac_due")
PHASE_ORDER = "{later} ({b}) is before {earlier} ({a})"


def phases_out_of_order(
    phases: dict[str, datetime | None],
) -> list[tuple[str, datetime, str, datetime]]:
    """Pairs of set phases (in PHASE_KEYS order) where the later one comes first."""
    known = [(key, phases[key]) for key in PHASE_KEYS if phases.get(key) is not None]
    return [
        (earlier, a, later, b)
        for (earlier, a), (later, b) in itertools.pairwise(known)
        if a is not None and b is not None and a > b
    ]


class Phases(Section):
    """Each phase's date-time (None where a phase is not set), in time order."""

    def __init__(self, *args: Any, r2c2_dues: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.r2c2_dues = r2c2_dues

    def get_fields(self) -> dict[str, Any]:
        return {key: Timestamp(required=key == "topics_release"
                               or (key in R2C2_PHASE_KEYS and self.r2c2_dues))
                for key in PHASE_KEYS}

    def check(self, values: dict[str, Any]) -> dict[str | None, list[Any]]:
        return {SECTION: [
            PHASE_ORDER.format(earlier=earlier, later=later, a=a.isoformat(), b=b.isoformat())
            for earlier, a, later, b in phases_out_of_order(self.make(values))]}

    def make(self, values: dict[str, Any]) -> dict[str, datetime | None]:
        return {key: values.get(key) for key in PHASE_KEYS}
