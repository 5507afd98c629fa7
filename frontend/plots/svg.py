"""What every plot shares: markers and colours, matplotlib's settings, the inline SVG
they are written as, and the lock that draws one plot at a time."""

from __future__ import annotations

import io
import math
import re
import threading
from collections.abc import Callable
from html import escape
from typing import Any, ParamSpec

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

# Marker shapes and line styles, one per run, so no run is told apart by colour alone.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
# Okabe & Ito's colour-blind-safe palette; colour is a second cue only.
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#F0E442"]
INK, MUTED, GRID = "#1b1f24", "#57606a", "#d0d7de"

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


def literal(text: str) -> str:
    """`text` drawn as written. matplotlib reads text between two `$` as mathtext, and a
    team name may hold `$` (run names allow it): "A$^^$-R1" would fail to draw and take
    the page down with it. `\\$` is matplotlib's escape for a plain dollar sign."""
    return text.replace("$", r"\$")


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


def new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=72, layout="constrained")


def style_axes(axes: Axes) -> None:
    axes.grid(True, color=GRID, linewidth=0.6)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)


P = ParamSpec("P")


def render(build: Callable[P, str], *args: P.args, **kwargs: P.kwargs) -> str:
    """Call a plot function with the plot settings in force, one plot at a time."""
    with _RENDER_LOCK, matplotlib.rc_context(_RC):
        return build(*args, **kwargs)
