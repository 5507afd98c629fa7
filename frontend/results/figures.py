"""The plots of a leaderboard, each with its caption and its numbers as a table, drawn once
per snapshot (and per manual reference where one is shown) and then served from the
cache: a snapshot never changes."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from django.core.cache import cache

from campaign.kinds import kind_of
from frontend import plots
from frontend.results.tables import Table, data_table
from infrastructure.throttles import CACHE_ERRORS
from scoring.leaderboard import Leaderboard
from scoring.measures.catalogue import MEAN_OVER, Measure
from scoring.measures.rubric import leaderboard_agreement
from scoring.models import Evaluation, ManualReference, RunScore

# A new version when drawn figures would no longer match their snapshot (v2: the
# Rubric-Cover labels carry the track's k).
CACHE_PREFIX = "results-figure:v2"
#: Logged when the cache (Redis in production) does not answer: the figure is drawn anyway.
FIGURE_CACHE_DOWN = "figure %s drawn without the cache: it does not answer (%s)"

logger = logging.getLogger(__name__)


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
    table: Table | None = None  # a summary beside the figures, shown before them


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
    try:
        figure = cache.get(key)
    except CACHE_ERRORS as error:  # the cache is a saving, not a need: draw it now
        logger.warning(FIGURE_CACHE_DOWN, name, error)
        return build()
    if not isinstance(figure, FigureView):
        figure = build()
        try:
            cache.set(key, figure, timeout=None)
        except CACHE_ERRORS as error:
            logger.warning(FIGURE_CACHE_DOWN, name, error)
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


def _draws(permutations: int | None) -> str:
    # A snapshot from before the number of permutations was recorded does not know it.
    return f" (B = {permutations} permutations)" if permutations else ""


def _hsd_figure(board: Leaderboard, key: str, ident: str) -> FigureView:
    measure = board.label_of(key)
    permutations = board.statistics.hsd_permutations
    pairs = board.statistics.tests()[key]
    return FigureView(
        ident=ident,
        svg=plots.render(plots.hsd_matrix_plot, board.runs_by(key), pairs,
                         measure_label=measure, permutations=permutations, ident=ident),
        caption=(f"Randomised Tukey HSD on {measure}{_draws(permutations)}: cross-hatched "
                 "cells marked 'differ' are pairs that differ at p < 0.05."),
        data=data_table(f"{ident}-data", f"Tukey HSD pairs on {measure}",
                        ["Pair", "Difference", "p-value", "At p < 0.05"],
                        [[f"{p.a} vs {p.b}", plots.fmt(p.difference),
                          plots.p_value_text(p.p_value, permutations),
                          "differ" if p.significant else "no significant difference"]
                         for p in pairs]),
    )


def _hsd_sections(board: Leaderboard, ident: str, section: str) -> list[PlotSection]:
    """One section per measure tested: the ranking measure's first, then the picks."""
    sections = []
    ranking = board.statistics.tested
    for key, pairs in board.statistics.tests().items():
        measure = board.measure(key)
        suffix = "" if key == ranking else "-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)
        how = ("each question's answer (correctness and confidence) permuted across the "
               f"runs and every run's {measure.label} recomputed" if measure.from_parts
               else "over the question-by-run matrix")
        intro = (f"Which runs differ on {measure.label}"
                 f"{', the ranking measure' if key == ranking else ''}, per randomised "
                 f"Tukey HSD ({how}), at p < 0.05.")
        anova = board.statistics.anova
        if key == ranking and anova is not None and anova.p_system is not None:
            intro += (f" Two-way ANOVA on {board.label_of(board.statistics.measure)}: "
                      f"F = {anova.f_system:.3f}, p = {anova.p_system:.4f} for the system "
                      "effect.")
        sections.append(PlotSection(
            ident=f"{section}-hsd{suffix}", heading=f"Tukey HSD on {measure.label}: "
                                                   "which runs differ",
            intro=intro, groups=list(plots.hsd_groups(board.runs_by(key), pairs).items()),
            figures=[cached_figure(board, f"hsd:{key}", partial(
                _hsd_figure, board, key, f"{ident}-hsd{suffix}"))],
        ))
    return sections


@dataclass(frozen=True)
class Agreement:
    """One measure of a Rubric leaderboard against the official leaderboard: the runs on
    both and the two rankings' correlations (None when undefined: fewer than two such
    runs, or one side scores them all the same)."""

    measure: Measure
    points: list[plots.AgreementPoint]
    kendall_tau: float | None
    spearman: float | None


def agreements(board: Leaderboard, official: Mapping[str, float]) -> list[Agreement]:
    """Each leaderboard measure of `board`, the ranking one first, against the official scores,
    over the board's own rows (the snapshot its viewer may see), by the meta-evaluation API's
    `leaderboard_agreement`."""
    styles = {row.run: index for index, row in enumerate(board.rows)}
    found = []
    for measure in sorted(board.measures(), key=lambda m: m.key != board.ranked_by):
        points = [plots.AgreementPoint(row.run, official[row.run], value, styles[row.run])
                  for row in board.rows if row.run in official
                  and (value := row.score(measure.key)) is not None and math.isfinite(value)]
        tau: float | None = None
        rho: float | None = None
        try:
            agreement = leaderboard_agreement({p.run: p.rubric for p in points},
                                              {p.run: p.official for p in points})
            tau, rho = agreement.kendall_tau, agreement.spearman
        except ValueError:  # fewer than two runs, or a side without a ranking: undefined
            pass
        found.append(Agreement(measure, points, tau, rho))
    return found


def official_text(score: float) -> str:
    # As uploaded, not rounded to 4 places: an official score's scale is the organisers'
    # (0.0003 and 1234.5 are both possible).
    return format(score, ".10g")


def _undefined_because(agreement: Agreement) -> str:
    if agreement.kendall_tau is not None:
        return ""
    if len(agreement.points) < 2:
        return " (fewer than two runs are on both leaderboards)"
    return " (one of the two leaderboards gives all these runs the same score)"


def _agreement_figure(agreement: Agreement, teams: Mapping[str, str],
                      ident: str) -> FigureView:
    label = agreement.measure.label
    points = agreement.points
    correlation = plots.correlation_text(agreement.kendall_tau, agreement.spearman)
    by_official = sorted(points, key=lambda p: (-p.official, p.run))
    return FigureView(
        ident=ident,
        svg=plots.render(plots.agreement_scatter, points, measure_label=label,
                         kendall_tau=agreement.kendall_tau, spearman=agreement.spearman,
                         ident=ident),
        caption=(f"{label} of each run against its official score, {len(points)} run(s) on "
                 f"both leaderboards: {correlation}{_undefined_because(agreement)}."),
        data=data_table(f"{ident}-data", f"Official score and {label} of each run",
                        ["Run", "Team", "Official score", label],
                        [[p.run, teams.get(p.run, ""), official_text(p.official),
                          plots.fmt(p.rubric)] for p in by_official],
                        labels=2),
    )


def _agreement_section(board: Leaderboard, reference: ManualReference,
                       official: Mapping[str, float], ident: str,
                       section: str) -> PlotSection:
    runs = {row.run for row in board.rows}
    shared = runs & set(official)
    intro = (f"The official leaderboard the organisers uploaded ({len(official)} run(s)) set "
             f"against this one, as \"Pencils Down!\" (Farzi & Dietz, ICTIR 2024) does: "
             "Kendall's tau-b and Spearman's rho (average ranks for ties) say how alike the "
             "two rankings are, 1 for the same order, -1 for the reverse.")
    if not shared:
        return PlotSection(ident=section, heading="Agreement with the official leaderboard",
                           intro=intro + " None of its runs is on this leaderboard, so "
                                         "there is nothing to compare.", figures=[])
    intro += (f" Each plot has one point per run on both ({len(shared)}): its official "
              "score across, one measure of this leaderboard up.")
    if len(runs) > len(shared):
        intro += (f" {len(runs) - len(shared)} run(s) of this leaderboard are not on the "
                  "official one and are left out.")
    found = agreements(board, official)
    teams = {row.run: row.team for row in board.rows}
    # The reference's id and upload time: a new upload draws anew; the evaluation alone
    # would serve the old reference's plots.
    upload = f"{reference.pk}:{reference.uploaded_at.isoformat()}"

    def build(agreement: Agreement) -> Callable[[], FigureView]:
        # A measure's key holds '@', which would need escaping in the SVG's url(#...).
        name = re.sub(r"[^A-Za-z0-9_-]", "-", agreement.measure.key)
        return lambda: _agreement_figure(agreement, teams, f"{ident}-agreement-{name}")

    return PlotSection(
        ident=section, heading="Agreement with the official leaderboard", intro=intro,
        grid=True,
        figures=[cached_figure(board, f"agreement:{upload}:{a.measure.key}", build(a))
                 for a in found],
        table=data_table(f"{ident}-agreement-summary",
                         "Rank correlation with the official leaderboard, per measure",
                         ["Measure", "Runs on both", "Kendall's tau-b", "Spearman's rho"],
                         [[a.measure.label, str(len(a.points)), plots.fmt(a.kendall_tau),
                           plots.fmt(a.spearman)] for a in found]),
    )


def plot_sections(board: Leaderboard, reference: ManualReference | None = None, *,
                  team_own: Callable[[str], bool] = lambda team: False) -> list[PlotSection]:
    """The board's plot sections; with `reference`, also its agreement with the official
    leaderboard. An AC run's reliability diagram shows only where `team_own(team)` holds, since
    its bins can give a confidence away (docs/results.md, "The results pages")."""
    ident, section = f"{board.track}-plot", f"{board.track}-plots"
    loaded: dict[str, dict[str, dict[str, dict[str, float]]]] = {}

    def per_question() -> dict[str, dict[str, dict[str, float]]]:
        if "scores" not in loaded:
            loaded["scores"] = _per_question_of(board.evaluation)
        return loaded["scores"]

    sections = []
    if kind_of(board.kind).answers and board.rows:
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
                   for index, row in enumerate(board.rows) if team_own(row.team)]
        if figures:
            sections.append(PlotSection(
                ident=f"{section}-reliability", heading="Reliability diagrams",
                intro=("Answers grouped into 10 equal-width confidence bins: a well "
                       "calibrated run's bins lie on the diagonal. Unanswered questions "
                       "count with confidence 0. Confidences stay each team's own: the "
                       "diagrams are of the runs whose confidences you may see."),
                figures=figures, grid=True,
            ))
    measures = [m for m in board.measures() if m.interval]
    if board.rows and measures:
        names = " and ".join(m.label for m in measures)
        sections.append(PlotSection(
            ident=f"{section}-intervals", heading=f"Mean {names} with 95% intervals",
            intro=("Means over the questions scored; the bars are 95% intervals "
                   f"({board.statistics.interval_method})."),
            figures=[cached_figure(board, "intervals", lambda: _interval_figure(
                board, measures, f"{ident}-intervals"))],
        ))
    sections.extend(_hsd_sections(board, ident, section))
    if reference is not None and reference.leaderboard is not None and board.rows:
        sections.append(_agreement_section(board, reference, reference.leaderboard, ident,
                                           f"{section}-agreement"))
    return sections
