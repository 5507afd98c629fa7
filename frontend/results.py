"""Results pages: the leaderboards a viewer may see, with plots, and a run's per-question scores.

Thin views over `scoring.selectors` (which decides who sees which snapshot) plus the
shaping of stored scores into tables and figures. Plots are rendered once per
evaluation and plot, then served from the cache: an evaluation never changes.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from campaign.models import Campaign, Role, TrackKind
from campaign.selectors import campaign_list, campaign_role, questions_refusal
from frontend import plots
from scoring.leaderboard import Leaderboard
from scoring.measures.catalogue import (
    MEAN_OVER,
    Measure,
    label_of,
    measures_of,
    per_question_measures,
)
from scoring.models import Evaluation, RunScore
from scoring.selectors import evaluation_visible, leaderboards_visible

NO_SUCH_RESULT = "No such run in the results you may see."
CACHE_PREFIX = "results-figure:v1"


def _html(measure: Measure) -> SafeString:
    # mark_safe: the labels are the catalogue's constants, never user input.
    return mark_safe(measure.html)


# --- view models -------------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    key: str
    label: str
    label_html: SafeString
    numeric: bool = True
    first_sort: str = "descending"  # what the first click on the header does


@dataclass(frozen=True)
class Cell:
    text: str
    sort: str = ""
    href: str = ""
    numeric: bool = True
    row_header: bool = False


@dataclass
class Table:
    ident: str
    caption: str
    columns: list[Column]
    rows: list[list[Cell]]
    sorted_by: str = ""
    sorted_dir: str = "descending"
    sortable: bool = True


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


@dataclass(frozen=True)
class CampaignTime:
    """A moment as the pages show it: in the campaign's time zone, with UTC on hover
    (DESIGN.md section 7: deadlines are enforced in UTC, shown in the campaign's zone)."""

    utc: datetime
    local: datetime
    zone: str


def campaign_time(campaign: Campaign, at: datetime) -> CampaignTime:
    return CampaignTime(utc=at.astimezone(zoneinfo.ZoneInfo("UTC")),
                        local=at.astimezone(zoneinfo.ZoneInfo(campaign.timezone)),
                        zone=campaign.timezone)


@dataclass
class BoardView:
    track: str
    kind: str
    kind_label: str
    published: bool
    public_from: CampaignTime | None  # published, not yet public: when it will be
    stale: bool  # computed before the latest judgment edit (DESIGN.md section 5.4)
    judge: str
    computed_at_utc: datetime
    computed_at_local: datetime
    edited_judgments: int
    needs_review: int
    questions: int
    table: Table
    measures: list[Measure]
    sections: list[PlotSection]


# --- reads -------------------------------------------------------------------------------

def run_score_in_results(
    *, campaign: Campaign, run_name: str, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> RunScore | None:
    """The run's scores in a leaderboard snapshot this user may see, or None.

    Not `run_scores_visible`: that needs the run itself to be visible to the user, and a
    published leaderboard shows other teams' runs whose files stay private.
    """
    for track in campaign.tracks.order_by("slug"):
        evaluation = evaluation_visible(track=track, user=user, now=now)
        if evaluation is None:
            continue
        score = (RunScore.objects.filter(evaluation=evaluation, run__name=run_name)
                 .select_related("run__team", "evaluation__track").first())
        if score is not None:
            return score
    return None


def _per_question_of(evaluation_id: int) -> dict[str, dict[str, dict[str, float]]]:
    return {
        name: per_question
        for name, per_question in RunScore.objects.filter(evaluation_id=evaluation_id)
        .values_list("run__name", "per_question")
    }


# --- figures -----------------------------------------------------------------------------

def _cached_figure(evaluation: Evaluation | Leaderboard, name: str,
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


def _data_table(ident: str, caption: str, head: list[str], rows: list[list[str]]) -> Table:
    columns = [Column(key=str(i), label=h, label_html=escape(h), numeric=i > 0)
               for i, h in enumerate(head)]
    return Table(ident=ident, caption=caption, columns=columns, sortable=False, rows=[
        [Cell(text=text, numeric=i > 0, row_header=i == 0) for i, text in enumerate(row)]
        for row in rows
    ])


def _calibration_figure(board: Leaderboard, ident: str) -> FigureView:
    points = [plots.CalibrationPoint(run=row.run, r_o=r_o, r_u=row.scores["r_u"],
                                     hmr=row.scores["hmr"])
              for row in board.rows if (r_o := row.score("r_o")) is not None]
    return FigureView(
        ident=ident, svg=plots.render(plots.calibration_plot, points, ident=ident),
        caption=("R_O against R_U for every AC run. Dashed curves are HMR = 0.2, 0.4, 0.6 "
                 "and 0.8; each run has its own marker shape and is labelled with its name."),
        data=_data_table(f"{ident}-data", "R_O, R_U and HMR of each run",
                         ["Run", "R_O", "R_U", "HMR"],
                         [[p.run, plots.fmt(p.r_o), plots.fmt(p.r_u), plots.fmt(p.hmr)]
                          for p in points]),
    )


def _reliability_figure(run: str, per_question: Mapping[str, Mapping[str, float]], *,
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
        data=_data_table(f"{ident}-data", f"Confidence bins of {run}",
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
        data=_data_table(f"{ident}-data", f"Means and 95% intervals of {names}",
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
        data=_data_table(f"{ident}-data", f"Tukey HSD pairs on {measure}",
                         ["Pair", "Difference", "p-value", "At p < 0.05"],
                         [[f"{p.a} vs {p.b}", plots.fmt(p.difference),
                           plots.p_text(p.p_value, permutations).removeprefix("p "),
                           "differ" if p.significant else "no significant difference"]
                          for p in pairs]),
    )


def _sections(board: Leaderboard) -> list[PlotSection]:
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
            figures=[_cached_figure(board, "calibration",
                                    lambda: _calibration_figure(board, f"{ident}-calibration"))],
        ))
        def reliability(run: str, index: int) -> Callable[[], FigureView]:
            return lambda: _reliability_figure(run, per_question().get(run, {}),
                                               ident=f"{ident}-reliability-{index}",
                                               index=index)

        figures = [_cached_figure(board, f"reliability:{row.run}", reliability(row.run, index))
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
            figures=[_cached_figure(board, "intervals", lambda: _interval_figure(
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
            figures=[_cached_figure(board, "hsd", lambda: _hsd_figure(board, f"{ident}-hsd"))],
        ))
    return sections


# --- tables ------------------------------------------------------------------------------

def _number(value: float | None) -> Cell:
    return Cell(text=plots.fmt(value), sort="" if value is None else repr(float(value)))


def _leaderboard_table(campaign: Campaign, board: Leaderboard,
                       measures: list[Measure]) -> Table:
    columns = [
        Column("rank", "Rank", escape("Rank"), first_sort="ascending"),
        Column("run", "Run", escape("Run"), numeric=False, first_sort="ascending"),
        Column("team", "Team", escape("Team"), numeric=False, first_sort="ascending"),
        *[Column(m.key, m.label, _html(m),
                 first_sort="descending" if m.higher_is_better else "ascending")
          for m in measures],
    ]
    waiting = any(row.incomplete_questions for row in board.rows)
    if waiting:
        columns.append(Column("incomplete", "Waiting for review",
                              escape("Waiting for review"), first_sort="descending"))
    rows = []
    for rank, row in enumerate(board.rows, start=1):
        url = reverse("results-run", args=[campaign.slug, row.run])
        cells = [
            Cell(text=str(rank), sort=str(rank)),
            Cell(text=row.run, sort=row.run, href=url, numeric=False, row_header=True),
            Cell(text=row.team, sort=row.team, numeric=False),
            *[_number(row.score(m.key)) for m in measures],
        ]
        if waiting:
            cells.append(Cell(text=str(row.incomplete_questions),
                              sort=str(row.incomplete_questions)))
        rows.append(cells)
    return Table(
        ident=f"{board.track}-leaderboard",
        caption=(f"Track {board.track}: {len(rows)} run(s), ranked by "
                 f"{label_of(board.ranked_by)}"),
        columns=columns, rows=rows, sorted_by=board.ranked_by, sorted_dir="descending",
    )


def _board_view(campaign: Campaign, board: Leaderboard, now: datetime) -> BoardView:
    zone = zoneinfo.ZoneInfo(campaign.timezone)
    measures = measures_of(board.kind)
    public_from = (campaign_time(campaign, campaign.results_release)
                   if board.published and campaign.results_release
                   and not campaign.results_released(now) else None)
    return BoardView(
        track=board.track, kind=board.kind,
        kind_label=TrackKind(board.kind).label if board.kind in TrackKind.values
        else board.kind,
        published=board.published, public_from=public_from, stale=board.stale,
        judge=board.judge,
        computed_at_utc=board.computed_at.astimezone(zoneinfo.ZoneInfo("UTC")),
        computed_at_local=board.computed_at.astimezone(zone),
        edited_judgments=board.edited_judgments, needs_review=board.needs_review,
        questions=board.questions, measures=measures,
        table=_leaderboard_table(campaign, board, measures),
        sections=_sections(board),
    )


def _public_at(campaign: Campaign, role: str | None, now: datetime) -> CampaignTime | None:
    """For the public, before results_release: when published leaderboards become public."""
    if role is None and campaign.results_release and not campaign.results_released(now):
        return campaign_time(campaign, campaign.results_release)
    return None


def _empty_message(campaign: Campaign, role: str | None, now: datetime) -> str:
    if role == Role.ORGANISER:
        return "No track has been scored yet."
    if _public_at(campaign, role, now) is not None:
        return "No results are public yet."  # the page adds when they will be
    return "No results are published yet."


def _drilldown_cell(measure: Measure, value: float | None) -> Cell:
    numeric = measure.format != "verdict"
    if value is None:
        return Cell(text="not scored", sort="", numeric=numeric)
    if measure.format == "verdict":
        return Cell(text="✓ correct" if value else "✗ incorrect", sort=repr(float(value)),
                    numeric=False)
    if measure.format == "percent":
        return Cell(text=str(round(value * 100)), sort=repr(float(value)))
    return _number(value)


def _drilldown_table(score: RunScore, questions: list[tuple[str, str | None]],
                     kind: str) -> Table:
    measures = per_question_measures(kind)
    per_question = score.per_question
    with_text = any(text is not None for _, text in questions)
    columns = [
        Column("qid", "Question", escape("Question"), numeric=False,
               first_sort="ascending"),
        *([Column("text", "Question text", escape("Question text"), numeric=False,
                  first_sort="ascending")] if with_text else []),
        *[Column(m.key, m.label, _html(m), numeric=m.format != "verdict") for m in measures],
    ]
    rows = []
    for qid, text in questions:
        cells = [Cell(text=qid, sort=qid, numeric=False, row_header=True)]
        if with_text:
            cells.append(Cell(text=text or "", sort=text or "", numeric=False))
        cells += [_drilldown_cell(m, per_question.get(m.key, {}).get(qid)) for m in measures]
        rows.append(cells)
    return Table(ident="per-question", caption=f"{score.run.name}: scores per question",
                 columns=columns, rows=rows, sorted_by="qid", sorted_dir="ascending")


# --- views -------------------------------------------------------------------------------

def results(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    now = timezone.now()
    role = campaign_role(campaign=campaign, user=request.user)
    boards = leaderboards_visible(campaign=campaign, user=request.user, now=now)
    context = {
        "campaign": campaign,
        "role": role,
        "boards": [_board_view(campaign, board, now) for board in boards],
        "empty_message": _empty_message(campaign, role, now),
        "public_at": _public_at(campaign, role, now),
    }
    return render(request, "frontend/results/results.html", context)


def results_run(request: HttpRequest, slug: str, run_name: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    now = timezone.now()
    score = run_score_in_results(campaign=campaign, run_name=run_name, user=request.user,
                                 now=now)
    if score is None:
        raise Http404(NO_SUCH_RESULT)
    evaluation = score.evaluation
    kind = evaluation.track.kind
    role = campaign_role(campaign=campaign, user=request.user)
    show_text = questions_refusal(campaign=campaign, role=role, now=now) is None
    questions = [(q.qid, q.text if show_text else None)
                 for q in campaign.questions.order_by("position", "qid")]
    reliability = None
    if kind == TrackKind.AC:
        reliability = _cached_figure(evaluation, f"reliability-own:{score.run.name}",
                                     lambda: _reliability_figure(
                                         score.run.name, score.per_question,
                                         ident="run-reliability", index=0))
    context = {
        "campaign": campaign,
        "score": score,
        "run": score.run,
        "evaluation": evaluation,
        "published": evaluation.published_at is not None,
        "kind": kind,
        "aggregates": [(m, plots.fmt(score.aggregates.get(m.key)))
                       for m in measures_of(kind)],
        "table": _drilldown_table(score, questions, kind),
        "show_text": show_text,
        "reliability": reliability,
    }
    return render(request, "frontend/results/run.html", context)
