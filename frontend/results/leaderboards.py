"""The results page: the leaderboards a viewer may see, each as a sortable table with its
plots; a thin view over `scoring.selectors.leaderboards_visible`, which decides who sees
which snapshot."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from campaign.kinds import kind_of
from campaign.models import Campaign, Role, TrackKind
from campaign.selectors import campaign_list, campaign_role
from frontend.results.drilldown import team_own_values_of
from frontend.results.figures import PlotSection, plot_sections
from frontend.results.tables import Cell, Column, Table, measure_html, number_cell
from scoring.leaderboard import Leaderboard
from scoring.measures.catalogue import Measure, rubric_cover_name
from scoring.meta_selectors import reference_current
from scoring.models import ManualReference
from scoring.selectors import leaderboards_visible


@dataclass(frozen=True)
class CampaignTime:
    """A moment as the pages show it: in the campaign's time zone, with UTC on hover
    (deadlines are enforced in UTC, shown in the campaign's zone)."""

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
    stale: bool  # computed before the latest judgment edit (docs/judging.md)
    judge: str
    computed_at_utc: datetime
    computed_at_local: datetime
    edited_judgments: int
    needs_review: int
    questions: int
    table: Table
    measures: list[Measure]
    sections: list[PlotSection]
    settings: list[tuple[str, str]]  # a ranking/response track's, as the snapshot used them
    downloads: list[tuple[str, str]]  # (label, url)
    labels: list[str]  # per kind, how the labels behind a published board were decided
    scored_on: str = ""  # which questions the means are over, where not all (campaign.kinds)


#: How the pages name the settings a RUBRIC snapshot records.
SETTING_LABELS = {
    "min_grade": "Grade threshold (min_grade)",
    "label": "Rubric-Qrels label",
    "cover_k": "Rubric-Cover k",
    "depth": "Passages graded per query (depth)",
}


def _settings(board: Leaderboard) -> list[tuple[str, str]]:
    # A response's value counts all its segments whatever cover_k its key carries.
    name = board.label_of(rubric_cover_name(board.cover_k))
    shown = {"label": lambda v: "highest grade" if v == "max"
             else "items at the threshold or above",
             "cover_k": lambda v: str(v) if board.value_k is not None
             else f"all segments (named {name})"}
    return [(SETTING_LABELS.get(key, key), shown.get(key, str)(value))
            for key, value in board.params.items()]


def _downloads(campaign: Campaign, board: Leaderboard, role: str | None) -> list[tuple[str, str]]:
    """A ranking/response board's Rubric-Qrels (whoever sees the board may have them)
    and, for organisers, its graded passages in the workbench's JSONL."""
    if not kind_of(board.kind).rubric:
        return []
    query = f"?track={board.track}"
    downloads = [("Rubric-Qrels (trec_eval qrels)",
                  reverse("api-rubric-qrels", args=[campaign.slug]) + query)]
    if role == Role.ORGANISER:
        downloads.append(("Graded passages (Autograding Workbench JSONL)",
                          reverse("api-export", args=[campaign.slug, "graded.jsonl"]) + query))
    return downloads


def _reference(campaign: Campaign, board: Leaderboard) -> ManualReference | None:
    """A ranking/response track's current manual reference. Its official leaderboard (and
    its agreement with this one) may be shown wherever this leaderboard is; its manual
    qrels and the kappa on them stay on the organisers' meta-evaluation API."""
    if not kind_of(board.kind).rubric:
        return None
    return reference_current(track=campaign.tracks.get(slug=board.track))


def _leaderboard_table(campaign: Campaign, board: Leaderboard,
                       measures: list[Measure]) -> Table:
    columns = [
        Column("rank", "Rank", escape("Rank"), first_sort="ascending"),
        Column("run", "Run", escape("Run"), numeric=False, first_sort="ascending"),
        Column("team", "Team", escape("Team"), numeric=False, first_sort="ascending"),
        *[Column(m.key, m.label, measure_html(m),
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
            *[number_cell(row.score(m.key)) for m in measures],
        ]
        if waiting:
            cells.append(Cell(text=str(row.incomplete_questions),
                              sort=str(row.incomplete_questions)))
        rows.append(cells)
    return Table(
        ident=f"{board.track}-leaderboard",
        caption=(f"Track {board.track}: {len(rows)} run(s), ranked by "
                 f"{board.label_of(board.ranked_by)}"),
        columns=columns, rows=rows, sorted_by=board.ranked_by, sorted_dir="descending",
    )


def _board_view(campaign: Campaign, board: Leaderboard, now: datetime,
                role: str | None, team_own: Callable[[str], bool]) -> BoardView:
    zone = zoneinfo.ZoneInfo(campaign.timezone)
    measures = board.measures()
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
        sections=plot_sections(board, _reference(campaign, board), team_own=team_own),
        settings=_settings(board), downloads=_downloads(campaign, board, role),
        labels=[_label_origin(kind, origin) for kind, origin in board.labels.items()],
        scored_on=kind_of(board.kind).scored_on,
    )


def _label_origin(kind: str, origin: dict[str, Any]) -> str:
    """One kind's line of "how the labels were decided", in words."""
    parts = [f"{origin['by_people']} by people"]
    if origin.get("by_second_judge"):
        parts.insert(0, f"{origin['by_second_judge']} by the second judge under the guarantee")
    guarantee = origin.get("guarantee")
    if guarantee:
        at = ("no threshold passed yet" if guarantee["threshold"] is None
              else f"confidence >= {guarantee['threshold']:.3f}")
        parts.insert(0, f"{origin['accepted']} accepted under the agreement guarantee "
                        f"({guarantee['target']:g} agreement with people at risk "
                        f"{guarantee['risk']:g}, from {guarantee['sample']} blind labels; "
                        f"{at})")
    parts.append(f"{origin['by_judge']} on the judge's word alone"
                 + ("" if guarantee else f" (review threshold {origin['review_below']:g})"))
    return f"{kind}: {origin['judgments']} judgments, " + ", ".join(parts)


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


def results(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    now = timezone.now()
    role = campaign_role(campaign=campaign, user=request.user)
    boards = leaderboards_visible(campaign=campaign, user=request.user, now=now)
    team_own = team_own_values_of(campaign=campaign, user=request.user)  # once per page
    context = {
        "campaign": campaign,
        "role": role,
        "boards": [_board_view(campaign, board, now, role, team_own) for board in boards],
        "empty_message": _empty_message(campaign, role, now),
        "public_at": _public_at(campaign, role, now),
    }
    return render(request, "frontend/results/results.html", context)
