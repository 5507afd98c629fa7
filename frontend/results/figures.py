"""The plots of a leaderboard, each with its caption and its numbers as a table.

Plots are rendered once per evaluation and plot, then served from the cache: an
evaluation never changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.core.cache import cache

from campaign.models import TrackKind
from frontend import plots
from frontend.results.tables import Table, data_table
from scoring.leaderboard import Leaderboard
from scoring.measures.catalogue import MEAN_OVER, Measure, label_of, measures_of
from scoring.models import Evaluation, RunScore

CACHE_PREFIX = "results-figure:v1"


@dataclass(frozen=True)
class FigureView:
    """One plot: the SVG, a caption and the numbers it shows as a table."""

    ident: str
    svg: str
    caption: str
    data: Table


@dataclass
class PlotSection:
    ident: str
    heading: str
    intro: str
    figures: list[FigureView]
    grid: bool = False
    groups: list[tuple[str, str]] = field(default_factory=list)


def _per_question_of(evaluation_id: int) -> dict[str, dict[str, dict[str, float]]]:
    return {
        name: per_question
        for name, per_question in RunScore.objects.filter(evaluation_id=evaluation_id)
        .values_list("run__name", "per_question")
    }


def cached_figure(evaluation: Evaluation | Leaderboard, name: str,
                  build: Callable[[], FigureView]) -> FigureView:
    # Snapshots are immutable; computed_at and the fingerprint guard against a reused id
    # (a rebuilt database) meeting a long-lived cache.
    ident = evaluation.pk if isinstance(evaluation, Evaluation) else evaluation.evaluation
    key = (f"{CACHE_PREFIX}:{ident}:{evaluation.computed_at.isoformat()}:"
           f"{evaluation.fingerprint[:16]}:{name}")
    figure = cache.get(key)
    if not isinstance(figure, FigureView):
        figure = build()
        cache.set(key, figure, timeout=None)
    return figure


def _calibration_figure(board: Leaderboard, ident: str) -> FigureView:
    points = [plots.CalibrationPoint(run=row.run, r_o=r_o, r_u=row.scores["r_u"],
                                     hmr=row.scores["hmr"])
              for row in board.rows if (r_o := row.score("r_o")) is not None]
    return FigureView(
        ident=ident, svg=plots.render(plots.calibration_plot, points, ident=ident),
        caption=("R_O against R_U for every AC run. Dashed curves are HMR = 0.2, 0.4, 0.6 "
                 "and 0.8; each run has its own marker shape and is labelled with its name."),
        data=data_table(f"{ident}-data", "R_O, R_U and HMR of each run",
                        ["Run", "R_O", "R_U", "HMR"],
                        [[p.run, plots.fmt(p.r_o), plots.fmt(p.r_u), plots.fmt(p.hmr)]
                         for p in points]),
    )


def reliability_figure(run: str, per_question: Mapping[str, Mapping[str, float]], *,
                       ident: str, index: int) -> FigureView:
    confidence = per_question.get("confidence", {})
    correct = per_question.get("correct", {})
    qids = sorted(set(confidence) & set(correct))
    bins = plots.reliability_bins([confidence[q] for q in qids], [correct[q] for q in qids])
    return FigureView(
        ident=ident,
        svg=plots.render(plots.reliability_diagram, run, bins, ident=ident, index=index),
        caption=(f"{run}: accuracy per confidence bin (hatched bars, n = answers in the bin) "
                 "and the bins' mean confidence (markers); the dashed diagonal is perfect "
                 "calibration."),
        data=data_table(f"{ident}-data", f"Confidence bins of {run}",
                        ["Confidence bin", "Answers", "Mean confidence", "Accuracy"],
                        [[f"{b.lower:.1f} to {b.upper:.1f}", str(b.count),
                          plots.fmt(b.mean_confidence), plots.fmt(b.accuracy)]
                         for b in bins]),
    )


def _intervals(board: Leaderboard, measures: list[Measure]) -> list[plots.MeanInterval]:
    """Each run's mean and interval of each measure, as the snapshot computed them; a
    measure an older snapshot has no intervals of shows its mean alone."""
    intervals = []
    for row in board.rows:
        for measure in measures:
            ci = board.statistics.intervals.get(measure.key, {}).get(row.run)
            if ci is not None:
                intervals.append(plots.MeanInterval(row.run, measure.key, ci.mean,
                                                    ci.lower, ci.upper))
            elif (mean := row.score(measure.key)) is not None:
                intervals.append(plots.MeanInterval(row.run, measure.key, mean, None, None))
    return intervals


def _interval_figure(board: Leaderboard, measures: list[Measure], ident: str) -> FigureView:
    intervals = _intervals(board, measures)
    names = " and ".join(m.label for m in measures)
    labels = {m.key: m.label for m in measures}
    return FigureView(
        ident=ident,
        svg=plots.render(plots.interval_plot, intervals, measures=list(labels),
                         labels=labels, over=MEAN_OVER.get(board.kind, "questions"),
                         ident=ident),
        caption=(f"Mean {names} per run with 95% intervals ("
                 f"{board.statistics.interval_method}); " + ", ".join(
                     f"{m.label}: {plots.STYLE_NAMES[k]}" for k, m in enumerate(measures))
                 + "."),
        data=data_table(f"{ident}-data", f"Means and 95% intervals of {names}",
                        ["Run", "Measure", "Mean", "Lower", "Upper"],
                        [[i.run, labels[i.measure], plots.fmt(i.mean), plots.fmt(i.lower),
                          plots.fmt(i.upper)] for i in intervals]),
    )


def _hsd_figure(board: Leaderboard, ident: str) -> FigureView:
    measure = label_of(board.statistics.measure)
    permutations = board.statistics.hsd_permutations
    pairs = board.statistics.hsd
    return FigureView(
        ident=ident,
        svg=plots.render(plots.hsd_matrix_plot, board.runs_by_statistics_measure(), pairs,
                         measure_label=measure, permutations=permutations, ident=ident),
        caption=(f"Randomised Tukey HSD on {measure} (B = {permutations} permutations): "
                 "cross-hatched cells marked 'differ' are pairs that differ at p < 0.05."),
        data=data_table(f"{ident}-data", f"Tukey HSD pairs on {measure}",
                        ["Pair", "Difference", "p-value", "At p < 0.05"],
                        [[f"{p.a} vs {p.b}", plots.fmt(p.difference),
                          plots.p_text(p.p_value, permutations).removeprefix("p "),
                          "differ" if p.significant else "no significant difference"]
                         for p in pairs]),
    )


def plot_sections(board: Leaderboard) -> list[PlotSection]:
    ident, section = f"{board.track}-plot", f"{board.track}-plots"
    loaded: dict[str, dict[str, dict[str, dict[str, float]]]] = {}

    def per_question() -> dict[str, dict[str, dict[str, float]]]:
        if "scores" not in loaded:
            loaded["scores"] = _per_question_of(board.evaluation)
        return loaded["scores"]

    sections = []
    if board.kind == TrackKind.AC and board.rows:
        sections.append(PlotSection(
            ident=f"{section}-calibration", heading="Calibration: R_O against R_U",
            intro=("Higher is better on both axes; HMR, the ranking measure, is constant "
                   "along each dashed curve."),
            figures=[cached_figure(board, "calibration",
                                   lambda: _calibration_figure(board, f"{ident}-calibration"))],
        ))
        def reliability(run: str, index: int) -> Callable[[], FigureView]:
            return lambda: reliability_figure(run, per_question().get(run, {}),
                                              ident=f"{ident}-reliability-{index}",
                                              index=index)

        figures = [cached_figure(board, f"reliability:{row.run}", reliability(row.run, index))
                   for index, row in enumerate(board.rows)]
        sections.append(PlotSection(
            ident=f"{section}-reliability", heading="Reliability diagrams",
            intro=("Answers grouped into 10 equal-width confidence bins: a well calibrated "
                   "run's bins lie on the diagonal. Unanswered questions count with "
                   "confidence 0."),
            figures=figures, grid=True,
        ))
    measures = [m for m in measures_of(board.kind) if m.interval]
    if board.rows and measures:
        names = " and ".join(m.label for m in measures)
        sections.append(PlotSection(
            ident=f"{section}-intervals", heading=f"Mean {names} with 95% intervals",
            intro=("Means over the questions scored; the bars are 95% intervals "
                   f"({board.statistics.interval_method})."),
            figures=[cached_figure(board, "intervals", lambda: _interval_figure(
                board, measures, f"{ident}-intervals"))],
        ))
    if board.statistics.hsd:
        measure = label_of(board.statistics.measure)
        letters = plots.hsd_groups(board.runs_by_statistics_measure(), board.statistics.hsd)
        anova = board.statistics.anova
        intro = (f"Which runs differ on {measure}, per randomised Tukey HSD over the "
                 "question-by-run matrix, at p < 0.05.")
        if anova is not None and anova.p_system is not None:
            intro += (f" Two-way ANOVA: F = {anova.f_system:.3f}, "
                      f"p = {anova.p_system:.4f} for the system effect.")
        sections.append(PlotSection(
            ident=f"{section}-hsd", heading="Tukey HSD: which runs differ",
            intro=intro, groups=list(letters.items()),
            figures=[cached_figure(board, "hsd", lambda: _hsd_figure(board, f"{ident}-hsd"))],
        ))
    return sections
