"""(c) Each run's mean of one or more measures with its 95% confidence interval."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.lines import Line2D
from matplotlib.typing import LineStyleType

from .svg import INK, colour_for, figure_svg, literal, marker_for, new_figure, style_axes

INTERVAL_STYLES: list[LineStyleType] = [
    "-", (0, (4, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2))]
# How the k-th measure of an interval plot looks (MARKERS[k] with INTERVAL_STYLES[k]).
STYLE_NAMES = ["circles on solid lines", "squares on dashed lines",
               "triangles on dotted lines", "diamonds on dash-dot lines"]


@dataclass(frozen=True)
class MeanInterval:
    """A run's mean of one measure and its 95% CI (None when too few questions)."""

    run: str
    measure: str
    mean: float
    lower: float | None
    upper: float | None


def interval_plot(intervals: Sequence[MeanInterval], *, measures: Sequence[str],
                  labels: Mapping[str, str], over: str, ident: str) -> str:
    runs = list(dict.fromkeys(i.run for i in intervals))
    figure = new_figure(6.4, 1.4 + 0.75 * max(len(runs), 1))
    axes = figure.add_subplot()
    style_axes(axes)
    styles = INTERVAL_STYLES
    spread = 0.32 / max(len(measures) - 1, 1)
    for m_index, measure in enumerate(measures):
        offset = (m_index - (len(measures) - 1) / 2) * spread
        rows = [i for i in intervals if i.measure == measure]
        ys = [runs.index(i.run) + offset for i in rows]
        for row, y in zip(rows, ys, strict=True):
            if row.lower is not None and row.upper is not None:
                axes.plot([row.lower, row.upper], [y, y], color=INK, linewidth=1.2,
                          linestyle=styles[m_index % len(styles)])
                for end in (row.lower, row.upper):
                    axes.plot([end, end], [y - 0.07, y + 0.07], color=INK, linewidth=1.2)
        axes.plot([i.mean for i in rows], ys, linestyle="none", marker=marker_for(m_index),
                  markersize=8, markerfacecolor=colour_for(m_index), markeredgecolor=INK,
                  markeredgewidth=0.8)
        for row, y in zip(rows, ys, strict=True):
            axes.annotate(f"{row.mean:.3f}", (row.mean, y), xytext=(0, 6),
                          textcoords="offset points", ha="center", va="bottom", fontsize=8,
                          color=INK)
    axes.set_yticks(range(len(runs)), [literal(run) for run in runs])
    axes.set_ylim(len(runs) - 0.5, -0.6)  # best run on top
    axes.set_xlim(0, 1)
    axes.set_xlabel(f"mean over {over}; bars: 95% CI")
    # Legend entries: the marker together with the interval's line style.
    names = [labels.get(m, m) for m in measures]
    legend = [Line2D([0], [0], color=INK, linestyle=styles[k % len(styles)],
                     marker=marker_for(k), markerfacecolor=colour_for(k),
                     markeredgecolor=INK, markersize=7)
              for k in range(len(measures))]
    axes.legend(legend, names, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=len(names),
                frameon=False, handlelength=3)
    described = "; ".join(
        f"{i.run} {labels.get(i.measure, i.measure)} {i.mean:.3f}"
        + (f" (95% CI {i.lower:.3f} to {i.upper:.3f})"
           if i.lower is not None and i.upper is not None else " (no CI)")
        for i in intervals)
    names_text = " and ".join(names)
    legend_text = ", ".join(f"{name}: {STYLE_NAMES[k % len(STYLE_NAMES)]}"
                            for k, name in enumerate(names))
    return figure_svg(
        figure, ident=ident, title=f"Mean {names_text} per run with 95% confidence intervals",
        desc=(f"Interval plot: one row per run, best on top; each measure has its own marker "
              f"shape and line style ({legend_text}); the number above each marker is the "
              f"mean. {described}."),
    )
