"""Reads for scoring: leaderboards as each person may see them, per-question scores."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from campaign.models import Campaign, Role, Track, TrackKind
from campaign.selectors import campaign_membership, campaign_role
from grading.selectors import JudgedAnswerBlock, marked_run
from scoring.measures import MarkedNugget, PassageKey, derive_pr_qrels
from scoring.models import Evaluation, RunScore
from submissions.models import Run, RunStatus


def evaluation_visible(
    *, track: Track, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> Evaluation | None:
    """The snapshot of `track` this user may see: organisers the latest; participants the
    latest published; the public the latest published once results are released."""
    evaluations = Evaluation.objects.filter(track=track).order_by("-computed_at", "-id")
    role = campaign_role(campaign=track.campaign, user=user)
    if role == Role.ORGANISER:
        return evaluations.first()
    published = evaluations.filter(published_at__isnull=False).first()
    if published is None:
        return None
    if role == Role.PARTICIPANT or track.campaign.results_released(now):
        return published
    return None


def leaderboard(*, evaluation: Evaluation) -> dict[str, Any]:
    """The leaderboard of one snapshot in the API's shape (DESIGN.md section 9)."""
    rows = []
    for score in evaluation.scores.select_related("run__team").order_by("run__name"):
        rows.append({"run": score.run.name, "run_id": score.run_id, "team": score.run.team.name,
                     **score.aggregates, "incomplete_questions": score.incomplete_questions})
    measure = evaluation.statistics.get("measure")
    rows.sort(key=lambda row: -(row.get("hmr" if evaluation.track.kind == "ac" else measure)
                                or 0.0))
    return {
        "track": evaluation.track.slug, "kind": evaluation.track.kind,
        "evaluation": evaluation.pk, "judge": evaluation.judge,
        "computed_at": evaluation.computed_at.isoformat(),
        "published": evaluation.published_at is not None,
        "edited_judgments": evaluation.edited_judgments,
        "needs_review": evaluation.needs_review, "fingerprint": evaluation.fingerprint,
        "questions": evaluation.questions, "rows": rows,
        "statistics": evaluation.statistics,
    }


def leaderboards_visible(
    *, campaign: Campaign, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> list[dict[str, Any]]:
    boards = []
    for track in campaign.tracks.order_by("slug"):
        evaluation = evaluation_visible(track=track, user=user, now=now)
        if evaluation is not None:
            boards.append(leaderboard(evaluation=evaluation))
    return boards


def run_scores_visible(
    *, run: Run, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> RunScore | None:
    """A run's scores in the snapshot its viewer may see; teams see their own runs'
    latest scores early when the campaign allows it."""
    campaign = run.track.campaign
    evaluation = evaluation_visible(track=run.track, user=user, now=now)
    membership = campaign_membership(campaign=campaign, user=user)
    own = membership is not None and membership.team_id == run.team_id
    if own and campaign.teams_see_own_scores:
        evaluation = Evaluation.objects.filter(track=run.track).order_by(
            "-computed_at", "-id").first()
    if evaluation is None:
        return None
    return RunScore.objects.filter(evaluation=evaluation, run=run).first()


def graded_ac_runs(*, campaign: Campaign) -> list[Run]:
    """The current AC runs that have been graded: what leaderboards and qrels use."""
    return list(
        Run.objects.filter(track__campaign=campaign, track__kind=TrackKind.AC, is_current=True,
                           status__in=[RunStatus.GRADED, RunStatus.SCORED])
        .select_related("team", "track").order_by("name")
    )


def derived_qrels(blocks: Mapping[int, list[JudgedAnswerBlock]]) -> dict[str, dict[str, int]]:
    """PR qrels from the relevant nuggets of every graded AC run (DESIGN.md section 4)."""
    return derive_pr_qrels(
        [
            MarkedNugget(qid=block.marked.qid, mark=m.mark,
                         passage=PassageKey(m.nugget.passage_key.run_name,
                                            m.nugget.passage_key.rank))
            for block in run_blocks if block.complete
            for m in block.marked.nuggets
        ]
        for run_blocks in blocks.values()
    )


def campaign_qrels(*, campaign: Campaign) -> dict[str, dict[str, int]]:
    """The PR qrels the campaign's current judgments give (DESIGN.md section 4)."""
    return derived_qrels({run.pk: marked_run(run=run) for run in graded_ac_runs(campaign=campaign)})
