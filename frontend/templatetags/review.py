"""Template filters of the organisers' review pages."""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def percent(probability: float | None) -> str:
    """A probability as a whole percentage rounded down ("—" when unmeasured), so that a judgment
    under a threshold never shows the threshold's figure (0.796 under 80% reads 79%, not 80%);
    the epsilon keeps 0.57 at 57%."""
    if probability is None:
        return "—"
    return f"{math.floor(probability * 100 + 1e-9)}%"
