"""(b) An AC run's reliability diagram: accuracy per confidence bin."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.measures.ac import ECE_BINS, calibration_bins

from .svg import (
    INK,
    MUTED,
    colour_for,
    figure_svg,
    fmt,
    literal,
    marker_for,
    new_figure,
    style_axes,
)


@dataclass(frozen=True)
class ReliabilityBin:
    """One equal-width confidence bin: its edges, size, mean confidence and accuracy."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


def reliability_bins(confidences: Sequence[float], correct: Sequence[float],
                     *, n_bins: int = ECE_BINS) -> list[ReliabilityBin]:
    """The bins of a reliability diagram, with the ECE's bin edges (scoring.measures.ac)."""
    p = np.asarray(confidences, dtype=np.float64)
    hits = np.asarray(correct, dtype=np.float64)
    which = calibration_bins(p, n_bins=n_bins) if p.size else np.zeros(0, dtype=np.intp)
    bins = []
    for k in range(n_bins):
        members = which == k
        count = int(members.sum())
        bins.append(ReliabilityBin(
            lower=k / n_bins, upper=(k + 1) / n_bins, count=count,
            mean_confidence=float(p[members].mean()) if count else None,
            accuracy=float(hits[members].mean()) if count else None,
        ))
    return bins


def reliability_diagram(run: str, bins: Sequence[ReliabilityBin], *, ident: str,
                        index: int = 0, x_label: str = "confidence (score / 100)",
                        items: str = "answer") -> str:
    """Accuracy per confidence bin of `run` (an AC run's answers, or a judge's labels:
    `x_label` names the confidence and `items` what is counted)."""
    figure = new_figure(4.4, 4.4)
    axes = figure.add_subplot()
    style_axes(axes)
    axes.plot([0, 1], [0, 1], linestyle=(0, (5, 3)), color=MUTED, linewidth=1)
    axes.annotate("perfect calibration", (0.12, 0.12), xytext=(4, -4),
                  textcoords="offset points", rotation=45, rotation_mode="anchor",
                  ha="left", va="top", color=MUTED, fontsize=8)
    filled = [b for b in bins if b.count]
    for b in filled:
        assert b.accuracy is not None
        axes.bar(b.lower, b.accuracy, width=b.upper - b.lower, align="edge",
                 color="#dbe7f3", edgecolor=INK, linewidth=0.8, hatch="///")
        # Counts sit in one row above the plot area, clear of the bars and markers.
        axes.text((b.lower + b.upper) / 2, 1.09, f"n={b.count}", ha="center", va="center",
                  fontsize=8, color=INK)
    if filled:
        axes.plot([b.mean_confidence or 0.0 for b in filled], [b.accuracy or 0.0 for b in filled],
                  linestyle="-", linewidth=1.2, color=colour_for(index),
                  marker=marker_for(index), markersize=7, markeredgecolor=INK,
                  markeredgewidth=0.8)
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.15)
    axes.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.set_xlabel(x_label)
    axes.set_ylabel("accuracy in the bin")
    axes.set_title(literal(run), fontsize=11, color=INK, pad=4)
    axes.set_aspect("equal")
    described = "; ".join(
        f"{b.lower:.1f} to {b.upper:.1f}: {b.count} {items}(s), mean confidence "
        f"{fmt(b.mean_confidence, 2)}, accuracy {fmt(b.accuracy, 2)}" for b in filled
    ) or f"no {items}s"
    return figure_svg(
        figure, ident=ident, title=f"Reliability diagram of {run}",
        desc=(f"Bars over 10 equal-width confidence bins show the accuracy of the {items}s in "
              f"each bin, labelled with the number of {items}s; markers show the bin's mean "
              "confidence against its accuracy; the dashed diagonal is perfect calibration. "
              f"Non-empty bins: {described}."),
    )
