"""Plots of stored scores as inline, accessible SVG (matplotlib, no pyplot, no Django).

Every plot is readable without colour: runs differ by marker shape and carry direct
text labels, reference lines are dashed and labelled, significance is written out.
Text stays text (`svg.fonttype = none`), so the labels can be found, copied and read by
assistive technology. Each SVG is one `role="img"` with a `<title>` and a `<desc>`,
scales with its viewBox, and has its element ids prefixed so that several plots can
live in one HTML page.
"""

from __future__ import annotations

import io
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, ParamSpec

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.typing import LineStyleType, RcKeyType

from scoring.leaderboard import HsdPair
from scoring.measures.ac import ECE_BINS, calibration_bins

# Marker shapes and line styles, one per run, so no run is told apart by colour alone.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
# Okabe & Ito's colour-blind-safe palette; colour is a second cue only.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442"]
INK, MUTED, GRID = "#1b1f24", "#57606a", "#d0d7de"
HMR_ISO_LEVELS = (0.2, 0.4, 0.6, 0.8)

_RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",  # <text> elements, not glyph paths
    "svg.hashsalt": "results",  # deterministic ids; they are prefixed per plot anyway
    "font.family": "sans-serif",
    "font.size": 10,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "hatch.linewidth": 0.8,
}
# rc_context changes process-wide settings; rendering one plot at a time keeps a threaded
# server's concurrent requests from seeing each other's settings.
_RENDER_LOCK = threading.Lock()


def marker_for(index: int) -> str:
    return MARKERS[index % len(MARKERS)]


def colour_for(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def fmt(value: float | None, places: int = 4) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{places}f}"


# --- SVG output -------------------------------------------------------------------------

_XML_PROLOGUE = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_SVG_OPEN = re.compile(r"<svg\b[^>]*>", re.S)
_VIEWBOX = re.compile(r'viewBox="([^"]+)"')


def figure_svg(figure: Figure, *, ident: str, title: str, desc: str) -> str:
    """The figure as an inline `<svg role="img">` with `title`, `desc` and ids under `ident`."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None},
                   facecolor="white")
    svg = _METADATA.sub("", _XML_PROLOGUE.sub("", buffer.getvalue()))
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{ident}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{ident}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{ident}-\1"', svg)
    # matplotlib's stylesheet uses a bare `*` selector, which inline would reach the page.
    svg = svg.replace("*{stroke-linejoin", f"#{ident} *{{stroke-linejoin")
    opening = _SVG_OPEN.search(svg)
    assert opening is not None  # matplotlib always writes one
    viewbox = _VIEWBOX.search(opening.group(0))
    attributes = (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'id="{ident}" class="plot" role="img" aria-labelledby="{ident}-title {ident}-desc" '
        f'viewBox="{viewbox.group(1) if viewbox else "0 0 460 345"}" '
        f'preserveAspectRatio="xMidYMid meet">'
        f'<title id="{ident}-title">{escape(title)}</title>'
        f'<desc id="{ident}-desc">{escape(desc)}</desc>'
    )
    return svg[:opening.start()] + attributes + svg[opening.end():].strip()


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=72, layout="constrained")


def _style_axes(axes: Axes) -> None:
    axes.grid(True, color=GRID, linewidth=0.6)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)


# --- (a) R_O against R_U with HMR iso-curves -----------------------------------------------

@dataclass(frozen=True)
class CalibrationPoint:
    """One AC run's calibration: R_O (over-confidence side) and R_U, and their HMR."""

    run: str
    r_o: float
    r_u: float
    hmr: float


def hmr_iso_curve(level: float, samples: int = 200) -> tuple[list[float], list[float]]:
    """Points (R_O, R_U) with HMR = `level`: R_U = h R_O / (2 R_O - h), for R_U <= 1.

    From HMR = 2 R_O R_U / (R_O + R_U) (DESIGN.md section 6) solved for R_U; R_U <= 1
    holds for R_O >= h / (2 - h).
    """
    start = level / (2 - level)
    r_o = np.linspace(start, 1.0, samples)
    r_u = level * r_o / (2 * r_o - level)
    return r_o.tolist(), np.minimum(r_u, 1.0).tolist()


def calibration_plot(points: Sequence[CalibrationPoint], *, ident: str) -> str:
    figure = _figure(6.4, 5.6)
    axes = figure.add_subplot()
    _style_axes(axes)
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
        axes.annotate(f"{point.run} (HMR {point.hmr:.3f})", (point.r_o, point.r_u),
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


# --- (b) reliability diagrams -------------------------------------------------------------

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
                        index: int = 0) -> str:
    figure = _figure(4.4, 4.4)
    axes = figure.add_subplot()
    _style_axes(axes)
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
    axes.set_xlabel("confidence (score / 100)")
    axes.set_ylabel("accuracy in the bin")
    axes.set_title(run, fontsize=11, color=INK, pad=4)
    axes.set_aspect("equal")
    described = "; ".join(
        f"{b.lower:.1f} to {b.upper:.1f}: {b.count} answer(s), mean confidence "
        f"{fmt(b.mean_confidence, 2)}, accuracy {fmt(b.accuracy, 2)}" for b in filled
    ) or "no answers"
    return figure_svg(
        figure, ident=ident, title=f"Reliability diagram of {run}",
        desc=("Bars over 10 equal-width confidence bins show the accuracy of the answers in "
              "each bin, labelled with the number of answers; markers show the bin's mean "
              "confidence against its accuracy; the dashed diagonal is perfect calibration. "
              f"Non-empty bins: {described}."),
    )


# --- (c) means with 95% confidence intervals -------------------------------------------------

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
    figure = _figure(6.4, 1.4 + 0.75 * max(len(runs), 1))
    axes = figure.add_subplot()
    _style_axes(axes)
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
    axes.set_yticks(range(len(runs)), runs)
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


# --- (d) Tukey HSD ----------------------------------------------------------------------------

def p_text(p_value: float, permutations: int | None) -> str:
    """A randomised test's p-value; 0 means smaller than 1/B, which is what it can resolve."""
    if p_value == 0 and permutations:
        return f"p < {1 / permutations:.4f}"
    return f"p = {p_value:.4f}"


def hsd_groups(runs_by_mean: Sequence[str], pairs: Sequence[HsdPair]) -> dict[str, str]:
    """Letters for the 'underline' display of a multiple comparison.

    Runs in order of their mean, best first; each letter is a maximal stretch of
    consecutive runs no two of which differ significantly, so runs that share a letter
    are not significantly different (the display of NTCIR overview papers).
    """
    differ = {frozenset((p.a, p.b)) for p in pairs if p.significant}
    stretches: list[tuple[int, int]] = []
    n = len(runs_by_mean)
    for start in range(n):
        end = start
        while end + 1 < n and all(
            frozenset((runs_by_mean[end + 1], runs_by_mean[k])) not in differ
            for k in range(start, end + 1)
        ):
            end += 1
        if not any(s <= start and end <= e for s, e in stretches):
            stretches.append((start, end))
    letters = {run: "" for run in runs_by_mean}
    for number, (start, end) in enumerate(stretches):
        letter = _letter(number)
        for k in range(start, end + 1):
            letters[runs_by_mean[k]] += letter
    return letters


def _letter(number: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return alphabet[number] if number < len(alphabet) else f"[{number + 1}]"


def hsd_matrix_plot(runs: Sequence[str], pairs: Sequence[HsdPair], *, measure_label: str,
                    permutations: int | None, ident: str) -> str:
    by_pair = {frozenset((p.a, p.b)): p for p in pairs}
    n = len(runs)
    size = max(3.2, 1.3 + 1.15 * n)
    figure = _figure(size + 1.2, size)
    axes = figure.add_subplot()
    for i, row_run in enumerate(runs):
        for j, column_run in enumerate(runs):
            if i == j:
                axes.add_patch(_cell(j, i, face="#eaeef2", hatch=None))
                axes.text(j, i, "—", ha="center", va="center", color=MUTED)
                continue
            pair = by_pair.get(frozenset((row_run, column_run)))
            if pair is None:
                axes.add_patch(_cell(j, i, face="white", hatch=None))
                axes.text(j, i, "n/a", ha="center", va="center", color=MUTED, fontsize=8)
                continue
            significant = pair.significant
            axes.add_patch(_cell(j, i, face="#f6d5c1" if significant else "white",
                                 hatch="xx" if significant else None))
            verdict = "differ" if significant else "n.s."
            axes.text(j, i, f"{verdict}\n{p_text(pair.p_value, permutations)}", ha="center",
                      va="center", fontsize=8, color=INK,
                      fontweight="bold" if significant else "normal",
                      bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"})
    axes.set_xlim(-0.5, n - 0.5)
    axes.set_ylim(n - 0.5, -0.5)
    axes.set_xticks(range(n), runs, rotation=30, ha="right", rotation_mode="anchor")
    axes.set_yticks(range(n), runs)
    axes.tick_params(length=0)
    for side in axes.spines.values():
        side.set_visible(False)
    axes.set_aspect("equal")
    significant_pairs = [p for p in pairs if p.significant]
    described = "; ".join(
        f"{p.a} and {p.b} differ ({p_text(p.p_value, permutations)})" for p in significant_pairs
    ) or "no pair of runs differs significantly"
    return figure_svg(
        figure, ident=ident,
        title=f"Randomised Tukey HSD on {measure_label}: which runs differ at p < 0.05",
        desc=("A run-by-run matrix; each cell names the p-value of the pair. Cells of pairs "
              "that differ significantly say 'differ' in bold and are cross-hatched; the others "
              f"say 'n.s.'. {described}."),
    )


def _cell(x: int, y: int, *, face: str, hatch: str | None) -> Rectangle:
    return Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor=INK, linewidth=0.8,
                     hatch=hatch)


P = ParamSpec("P")


def render(build: Callable[P, str], *args: P.args, **kwargs: P.kwargs) -> str:
    """Call a plot function with the plot settings in force, one plot at a time."""
    with _RENDER_LOCK, matplotlib.rc_context(_RC):
        return build(*args, **kwargs)
