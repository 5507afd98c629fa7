"""(a) An AC track's R_O against R_U, one point per run, with HMR iso-curves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .svg import INK, MUTED, colour_for, figure_svg, literal, marker_for, new_figure, style_axes

HMR_ISO_LEVELS = (0.2, 0.4, 0.6, 0.8)


@dataclass(frozen=True)
class CalibrationPoint:
    """One AC run's calibration: R_O (over-confidence side) and R_U, and their HMR."""

    run: str
    r_o: float
    r_u: float
    hmr: float


def hmr_iso_curve(level: float, samples: int = 200) -> tuple[list[float], list[float]]:
    """Points (R_O, R_U) with HMR = `level`: R_U = h R_O / (2 R_O - h), HMR's definition
    (docs/measures.md) solved for R_U, from R_O = h / (2 - h), where R_U reaches 1."""
    start = level / (2 - level)
    r_o = np.linspace(start, 1.0, samples)
    r_u = level * r_o / (2 * r_o - level)
    return r_o.tolist(), np.minimum(r_u, 1.0).tolist()


def calibration_plot(points: Sequence[CalibrationPoint], *, ident: str) -> str:
    figure = new_figure(6.4, 5.6)
    axes = figure.add_subplot()
    style_axes(axes)
    for level in HMR_ISO_LEVELS:
        r_o, r_u = hmr_iso_curve(level)
        axes.plot(r_o, r_u, linestyle=(0, (5, 3)), color=MUTED, linewidth=1)
        # Each curve passes through (h, h): the label sits there, on the curve itself.
        axes.annotate(f"HMR = {level:.1f}", (level, level), xytext=(3, -3),
                      textcoords="offset points", ha="left", va="top", color=MUTED,
                      fontsize=9, bbox={"boxstyle": "round,pad=0.15", "fc": "white",
                                        "ec": "none", "alpha": 0.85})
    for index, point in enumerate(points):
        axes.plot([point.r_o], [point.r_u], linestyle="none", marker=marker_for(index),
                  markersize=9, markerfacecolor=colour_for(index), markeredgecolor=INK,
                  markeredgewidth=0.8)
        # Labels go left of points near the right edge so they stay inside the axes.
        right = point.r_o > 0.7
        offset = (-8, 6 + 10 * (index % 2)) if right else (8, 6 + 10 * (index % 2))
        axes.annotate(f"{literal(point.run)} (HMR {point.hmr:.3f})", (point.r_o, point.r_u),
                      xytext=offset, textcoords="offset points",
                      ha="right" if right else "left", va="bottom", color=INK, fontsize=9,
                      bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                            "alpha": 0.8})
    axes.set_xlim(0, 1.02)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("R_O (1 - mean confidence on incorrect answers)")
    axes.set_ylabel("R_U (1 - mean under-confidence on correct answers)")
    axes.set_aspect("equal")
    described = "; ".join(
        f"{p.run}: R_O {p.r_o:.3f}, R_U {p.r_u:.3f}, HMR {p.hmr:.3f}" for p in points)
    return figure_svg(
        figure, ident=ident, title="R_O against R_U for every AC run",
        desc=("Scatter plot, R_O on the horizontal axis and R_U on the vertical, both 0 to 1; "
              "each run has its own marker shape and a text label. Dashed curves join the "
              "points of equal HMR (0.2, 0.4, 0.6, 0.8); runs further up and right are "
              f"better calibrated. {described}."),
    )
