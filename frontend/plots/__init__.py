"""Plots of stored scores as inline, accessible SVG (matplotlib, no pyplot, no Django), one
module per plot over the shared machinery in `svg`; callers use the names below, as
`plots.render(...)`. What makes them accessible: docs/results.md, "Plots"."""

from .agreement import (
    AXIS_MARGIN,
    AgreementPoint,
    agreement_scatter,
    axis_limits,
    correlation_text,
)
from .calibration import HMR_ISO_LEVELS, CalibrationPoint, calibration_plot, hmr_iso_curve
from .hsd import hsd_groups, hsd_matrix_plot, p_text, p_value_text
from .intervals import INTERVAL_STYLES, STYLE_NAMES, MeanInterval, interval_plot
from .reliability import ReliabilityBin, reliability_bins, reliability_diagram
from .svg import (
    COLOURS,
    GRID,
    INK,
    MARKERS,
    MUTED,
    colour_for,
    figure_svg,
    fmt,
    literal,
    marker_for,
    render,
)

__all__ = [
    "AXIS_MARGIN",
    "COLOURS",
    "GRID",
    "HMR_ISO_LEVELS",
    "INK",
    "INTERVAL_STYLES",
    "MARKERS",
    "MUTED",
    "STYLE_NAMES",
    "AgreementPoint",
    "CalibrationPoint",
    "MeanInterval",
    "ReliabilityBin",
    "agreement_scatter",
    "axis_limits",
    "calibration_plot",
    "colour_for",
    "correlation_text",
    "figure_svg",
    "fmt",
    "hmr_iso_curve",
    "hsd_groups",
    "hsd_matrix_plot",
    "interval_plot",
    "literal",
    "marker_for",
    "p_text",
    "p_value_text",
    "reliability_bins",
    "reliability_diagram",
    "render",
]
