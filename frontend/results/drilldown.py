"""A run's page in the results: its aggregates, its per-question scores and, for its team and
the organisers only, an AC run's confidences and reliability diagram (docs/results.md,
"The results pages")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.html import escape

from campaign.kinds import kind_of
from campaign.models import Campaign, Role
from campaign.selectors import (
    campaign_list,
    campaign_membership,
    campaign_role,
    questions_refusal,
)
from frontend import plots
from frontend.results.figures import cached_figure, reliability_figure
from frontend.results.tables import Cell, Column, Table, measure_html, number_cell
from scoring.leaderboard import snapshot_cover_k
from scoring.measures.catalogue import Measure, measures_of, per_question_measures
from scoring.models import RunScore
from scoring.selectors import evaluation_visible

NO_SUCH_RESULT = "No such run in the results you may see."
#: Per-question values of a run that are its team's own, not scores.
TEAM_OWN_MEASURES = frozenset({"confidence"})


def run_score_in_results(
    *, campaign: Campaign, run_name: str, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> RunScore | None:
    """The run's scores in a snapshot this user may see, or None; found through the leaderboard,
    not `run_scores_visible`, since a published board shows runs whose files stay private."""
    for track in campaign.tracks.order_by("slug"):
        evaluation = evaluation_visible(track=track, user=user, now=now)
        if evaluation is None:
            continue
        score = (RunScore.objects.filter(evaluation=evaluation, run__name=run_name)
                 .select_related("run__team", "evaluation__track").first())
        if score is not None:
            return score
    return None


def team_own_values_of(
    *, campaign: Campaign, user: AbstractBaseUser | AnonymousUser
) -> Callable[[str], bool]:
    """Whose team-own values (an AC run's confidences) `user` may see, by team name:
    organisers every team's, a participant their own team's, anyone else none."""
    if campaign_role(campaign=campaign, user=user) == Role.ORGANISER:
        return lambda team: True
    membership = campaign_membership(campaign=campaign, user=user)
    own = membership.team if membership is not None else None
    return lambda team: own is not None and team == own.name


def _drilldown_cell(measure: Measure, value: float | None) -> Cell:
    numeric = measure.format != "verdict"
    if value is None:
        return Cell(text="not scored", sort="", numeric=numeric)
    if measure.format == "verdict":
        return Cell(text="✓ correct" if value else "✗ incorrect", sort=repr(float(value)),
                    numeric=False)
    if measure.format == "percent":
        return Cell(text=str(round(value * 100)), sort=repr(float(value)))
    return number_cell(value)


def _drilldown_table(score: RunScore, questions: list[tuple[str, str | None]],
                     kind: str, *, cover_k: int | None, team_own: bool) -> Table:
    measures = [m for m in per_question_measures(kind, cover_k=cover_k)
                if team_own or m.key not in TEAM_OWN_MEASURES]
    per_question = score.per_question
    with_text = any(text is not None for _, text in questions)
    columns = [
        Column("qid", "Question", escape("Question"), numeric=False,
               first_sort="ascending"),
        *([Column("text", "Question text", escape("Question text"), numeric=False,
                  first_sort="ascending")] if with_text else []),
        *[Column(m.key, m.label, measure_html(m), numeric=m.format != "verdict")
          for m in measures],
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


def results_run(request: HttpRequest, slug: str, run_name: str) -> HttpResponse:
    campaign = get_object_or_404(campaign_list(), slug=slug)
    now = timezone.now()
    score = run_score_in_results(campaign=campaign, run_name=run_name, user=request.user,
                                 now=now)
    if score is None:
        raise Http404(NO_SUCH_RESULT)
    evaluation = score.evaluation
    kind = evaluation.track.kind
    cover_k = snapshot_cover_k(evaluation.params)
    role = campaign_role(campaign=campaign, user=request.user)
    show_text = questions_refusal(campaign=campaign, role=role, now=now) is None
    questions = [(q.qid, q.text if show_text else None)
                 for q in campaign.questions.order_by("position", "qid")]
    team_own = team_own_values_of(campaign=campaign, user=request.user)(score.run.team.name)
    reliability = None
    if kind_of(kind).answers and team_own:
        reliability = cached_figure(evaluation, f"reliability-own:{score.run.name}",
                                    lambda: reliability_figure(
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
                       for m in measures_of(kind, cover_k=cover_k)],
        "table": _drilldown_table(score, questions, kind, cover_k=cover_k,
                                  team_own=team_own),
        "show_text": show_text,
        "confidences_withheld": kind_of(kind).answers and not team_own,
        "scored_on": kind_of(kind).scored_on,
        "reliability": reliability,
    }
    return render(request, "frontend/results/run.html", context)
