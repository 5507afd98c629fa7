"""(e) A Rubric leaderboard against the official one: a point per run, the official score
across and a Rubric measure up, Kendall's tau-b and Spearman's rho (computed elsewhere) on
top, as the scatter plots of Farzi and Dietz, "Pencils Down!", ICTIR 2024."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes

from .svg import INK, colour_for, figure_svg, fmt, literal, marker_for, new_figure, style_axes

#: Each side of an axis beyond the data, as a share of its range, when the values leave [0, 1].
AXIS_MARGIN = 0.08
#: Room above the vertical axis's top value for the labels of the runs there.
HEADROOM = 0.08
LABEL_SIZE = 8
# Where a label may go, in points from its point, in the order tried: beside it (right,
# left), then below, then a line further up or down.
_LABEL_SPOTS = [(7, 4), (-7, 4), (7, -4), (-7, -4), (7, 14), (-7, 14), (7, -14), (-7, -14)]


@dataclass(frozen=True)
class AgreementPoint:
    """One run on both leaderboards; `style` picks its marker and colour, the same in
    every plot of the track, so a run looks the same across measures."""

    run: str
    official: float
    rubric: float
    style: int


def correlation_text(kendall_tau: float | None, spearman: float | None,
                     places: int = 4) -> str:
    if kendall_tau is None or spearman is None:
        return "Kendall's tau-b and Spearman's rho undefined"
    return (f"Kendall's tau-b = {fmt(kendall_tau, places)}, "
            f"Spearman's rho = {fmt(spearman, places)}")


def axis_limits(values: Sequence[float]) -> tuple[float, float]:
    """0 to 1 when every value lies there, else the values' range with a margin, since an
    official score may be any number; equal values get a span of their magnitude (1 for 0)."""
    finite = [v for v in values if math.isfinite(v)]
    if all(0.0 <= v <= 1.0 for v in finite):
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    span = high - low if high > low else max(abs(high), 1.0)
    return low - AXIS_MARGIN * span, high + AXIS_MARGIN * span


def agreement_scatter(points: Sequence[AgreementPoint], *, measure_label: str,
                      kendall_tau: float | None, spearman: float | None, ident: str) -> str:
    figure = new_figure(4.8, 4.6)
    axes = figure.add_subplot()
    style_axes(axes)
    x_low, x_high = axis_limits([p.official for p in points])
    y_low, y_high = axis_limits([p.rubric for p in points])
    axes.set_xlim(x_low, x_high)
    axes.set_ylim(y_low, y_high + (y_high - y_low) * HEADROOM)
    for point in points:
        # clip_on=False: a run at 0 or 1 sits on the axis and must show whole.
        axes.plot([point.official], [point.rubric], linestyle="none",
                  marker=marker_for(point.style), markersize=8,
                  markerfacecolor=colour_for(point.style), markeredgecolor=INK,
                  markeredgewidth=0.8, clip_on=False)
    for point, (dx, dy) in zip(points, _label_offsets(axes, points), strict=True):
        axes.annotate(literal(point.run), (point.official, point.rubric), xytext=(dx, dy),
                      textcoords="offset points", ha="left" if dx > 0 else "right",
                      va="bottom" if dy > 0 else "top", color=INK, fontsize=LABEL_SIZE,
                      bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                            "alpha": 0.8})
    axes.set_xlabel("official leaderboard's score")
    axes.set_ylabel(literal(measure_label))
    axes.set_title(correlation_text(kendall_tau, spearman, 3), fontsize=9, color=INK, pad=6)
    described = "; ".join(
        f"{p.run}: official {p.official:.4g}, {measure_label} {p.rubric:.3f}" for p in points
    ) or "no run is on both leaderboards"
    return figure_svg(
        figure, ident=ident,
        title=(f"{measure_label} against the official leaderboard: "
               f"{correlation_text(kendall_tau, spearman)}"),
        desc=(f"Scatter plot, the official leaderboard's score on the horizontal axis "
              f"({x_low:.4g} to {x_high:.4g}) and {measure_label} on the vertical "
              f"({y_low:.4g} to {y_high:.4g}); one point per run on both leaderboards, each "
              f"with its own marker shape and a text label. Runs ranked alike by both lie "
              f"along a rising line. {described}."),
    )


def _label_offsets(axes: Axes, points: Sequence[AgreementPoint]) -> list[tuple[int, int]]:
    """Each point's label offset: the first spot inside the axes clear of the labels and markers
    placed so far (greedy, on an estimated label size), else the first spot inside."""
    to_display = axes.transData
    frame = axes.get_window_extent()
    scale = axes.figure.dpi / 72  # points to display units
    width_of = 0.58 * LABEL_SIZE * scale  # the mean advance of a sans-serif character
    height = 1.4 * LABEL_SIZE * scale
    centres = [tuple(to_display.transform((p.official, p.rubric))) for p in points]
    taken = [(x - 5 * scale, y - 5 * scale, x + 5 * scale, y + 5 * scale)
             for x, y in centres]  # the markers
    offsets = []
    for point, (x, y) in zip(points, centres, strict=True):
        width = width_of * len(point.run)
        boxes = []
        for dx, dy in _LABEL_SPOTS:
            left = x + dx * scale if dx > 0 else x + dx * scale - width
            bottom = y + dy * scale if dy > 0 else y + dy * scale - height
            boxes.append(((dx, dy), (left, bottom, left + width, bottom + height)))
        inside = [(spot, box) for spot, box in boxes
                  if frame.x0 <= box[0] and box[2] <= frame.x1
                  and frame.y0 <= box[1] and box[3] <= frame.y1] or boxes
        spot, box = next(((spot, box) for spot, box in inside
                          if not any(_overlap(box, other) for other in taken)), inside[0])
        taken.append(box)
        offsets.append(spot)
    return offsets


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
