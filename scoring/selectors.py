"""Reads for scoring: leaderboards as each person may see them, per-question scores."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Max
from django.urls import reverse

from campaign.kinds import kind_of
from campaign.models import Campaign, Membership, Role, Track
from campaign.selectors import campaign_membership, campaign_role
from grading.models import JudgmentEdit
from grading.review.queue import doubtful_judgments, escalation_thresholds
from grading.selectors import JudgedAnswerBlock, marked_run
from scoring.leaderboard import (
    Leaderboard,
    LeaderboardRow,
    Statistics,
    best_first,
    params_in_order,
    ranks_by,
    snapshot_cover_k,
)
from scoring.measures import derive_pr_qrels
from scoring.models import Evaluation, RunScore
from submissions.models import Run


def evaluation_latest(*, track: Track, published: bool = False) -> Evaluation | None:
    """The newest snapshot of `track` (the newest published one if `published`): what
    organisers see and publish. None before the track is first scored."""
    evaluations = Evaluation.objects.filter(track=track)
    if published:
        evaluations = evaluations.filter(published_at__isnull=False)
    return evaluations.order_by("-computed_at", "-id").first()


def evaluation_visible(
    *, track: Track, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> Evaluation | None:
    """The snapshot of `track` this user may see: organisers the latest; participants the
    latest published; the public the latest published once results are released."""
    role = campaign_role(campaign=track.campaign, user=user)
    if role == Role.ORGANISER:
        return evaluation_latest(track=track)
    published = evaluation_latest(track=track, published=True)
    if published is None:
        return None
    if role == Role.PARTICIPANT or track.campaign.results_released(now):
        return published
    return None


def leaderboard(*, evaluation: Evaluation) -> Leaderboard:
    """The leaderboard of one snapshot, best first (the API's shape: `as_json()`)."""
    rows = [
        LeaderboardRow(run=score.run.name, run_id=score.run_id, team=score.run.team.name,
                       scores=dict(score.aggregates),
                       incomplete_questions=score.incomplete_questions)
        for score in evaluation.scores.select_related("run__team").order_by("run__name")
    ]
    statistics = Statistics.from_json(evaluation.statistics)
    kind = evaluation.track.kind
    rows = best_first(rows, ranks_by(kind, statistics, snapshot_cover_k(evaluation.params)))
    return Leaderboard(
        track=evaluation.track.slug, kind=evaluation.track.kind,
        evaluation=evaluation.pk, judge=evaluation.judge,
        computed_at=evaluation.computed_at,
        published=evaluation.published_at is not None,
        stale=evaluation_stale(evaluation=evaluation),
        edited_judgments=evaluation.edited_judgments,
        needs_review=evaluation.needs_review, fingerprint=evaluation.fingerprint,
        questions=evaluation.questions, rows=rows, statistics=statistics,
        params=params_in_order(evaluation.params), labels=evaluation.labels,
    )


def leaderboards_visible(
    *, campaign: Campaign, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> list[Leaderboard]:
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
    return runs_scores_visible(runs=[run], user=user, now=now).get(run.pk)


def runs_scores_visible(
    *, runs: Iterable[Run], user: AbstractBaseUser | AnonymousUser, now: datetime
) -> dict[int, RunScore]:
    """`run_scores_visible` of many runs, by run id: the queries grow with the tracks, not
    with the runs (a team page lists every version of every run)."""
    memberships: dict[int, Membership | None] = {}
    snapshots: dict[tuple[int, bool], Evaluation | None] = {}  # by (track id, early)
    snapshot_of: dict[int, int] = {}  # run id -> the evaluation id its viewer may see
    for run in runs:
        campaign = run.track.campaign
        if campaign.pk not in memberships:
            memberships[campaign.pk] = campaign_membership(campaign=campaign, user=user)
        membership = memberships[campaign.pk]
        early = (campaign.teams_see_own_scores and membership is not None
                 and membership.team_id == run.team_id)
        if (run.track_id, early) not in snapshots:
            snapshots[run.track_id, early] = (
                evaluation_latest(track=run.track) if early
                else evaluation_visible(track=run.track, user=user, now=now))
        evaluation = snapshots[run.track_id, early]
        if evaluation is not None:
            snapshot_of[run.pk] = evaluation.pk
    scores = RunScore.objects.filter(run__in=list(snapshot_of),
                                     evaluation__in=set(snapshot_of.values()))
    return {score.run_id: score for score in scores
            if snapshot_of[score.run_id] == score.evaluation_id}


def graded_ac_runs(*, campaign: Campaign) -> list[Run]:
    """The current AC runs that have been graded: what leaderboards and qrels use."""
    return list(
        Run.objects.filter(track__campaign=campaign).of_kinds(answers=True).current().judged()
        .not_withdrawn()
        .select_related("team", "track").order_by("name")
    )


def derived_qrels(blocks: Mapping[int, list[JudgedAnswerBlock]]) -> dict[str, dict[str, int]]:
    """PR qrels from the relevant nuggets of every graded AC run (docs/formats.md)."""
    return derive_pr_qrels(
        [m for block in run_blocks if block.complete for m in block.marked.nuggets]
        for run_blocks in blocks.values()
    )


def campaign_qrels(*, campaign: Campaign) -> dict[str, dict[str, int]]:
    """The PR qrels the campaign's current judgments give."""
    return derived_qrels({run.pk: marked_run(run=run) for run in graded_ac_runs(campaign=campaign)})


# --- what stands between a snapshot and its publication (docs/judging.md) ---------------
STALE_SNAPSHOT = (
    "the scores of track {track} were computed at {computed} UTC, before the latest judgment "
    "edit ({edited} UTC): run `python manage.py score {slug}` (or wait for the worker) and "
    "publish again"
)
DOUBTFUL_NOT_REVIEWED = (
    "the judge was unsure of {count} judgment(s) behind the scores of track {track} (its "
    "confidence is under the review threshold {threshold:g}) and no organiser has confirmed "
    "or corrected them: review them at {url}"
)
ESCALATED_NOT_REVIEWED = (
    "{count} judgment(s) behind the scores of track {track} need a person ({rules}) and no "
    "organiser has labelled, confirmed or corrected them: review them at {url}"
)
UTC_TIME = "%Y-%m-%d %H:%M:%S"


def judgment_edit_count(*, campaign: Campaign) -> int:
    """How many post-edits the campaign's judgments have had; edits are only ever added."""
    return JudgmentEdit.objects.filter(judgment__campaign=campaign).count()


def evaluation_stale(*, evaluation: Evaluation) -> bool:
    """Was this snapshot computed before the campaign's latest judgment edit? Any edit in the
    campaign counts, not only the track's; why, and why a count rather than a time:
    docs/results.md, "Stale snapshots"."""
    edits = JudgmentEdit.objects.filter(judgment__campaign_id=evaluation.track.campaign_id)
    return edits.count() > evaluation.judgment_edits_seen


def runs_behind(evaluation: Evaluation) -> Any:
    """The runs whose judgments a snapshot's numbers come from: an AC, ranking or
    response snapshot's own runs; for a PR snapshot every graded AC run of the
    campaign, its qrels' source."""
    if kind_of(evaluation.track.kind).graded:
        return Run.objects.filter(scores__evaluation=evaluation)
    return graded_ac_runs(campaign=evaluation.track.campaign)


def doubtful_unreviewed(*, evaluation: Evaluation) -> list[int]:
    """Ids of the official judgments behind a snapshot that are doubtful (review threshold,
    agreement guarantee, unparsed grade) and that no organiser has edited or confirmed; an
    unmeasured confidence is no doubt (docs/results.md, "Publishing")."""
    return list(
        doubtful_judgments(campaign=evaluation.track.campaign, runs=runs_behind(evaluation))
        .filter(edited_label__isnull=True).order_by("pk").values_list("pk", flat=True)
    )


@dataclass(frozen=True)
class PublishProblem:
    """One reason a snapshot may not be published. `waivable`: publishing with `force`
    goes over it (unreviewed doubt); stale numbers are never waivable."""

    message: str
    waivable: bool

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class PublishCheck:
    """What a snapshot's publication would go over, read once for both the refusal and
    the record of an override."""

    evaluation: Evaluation
    stale: bool
    latest_edit: datetime | None
    doubtful: list[int]  # ids of unreviewed doubtful judgments behind it
    review_below: float
    # Kinds under the agreement guarantee and the confidence each must reach (None: none).
    escalation: dict[str, float | None]

    def _doubt_message(self, url: str) -> str:
        track = self.evaluation.track.slug
        if not self.escalation:
            return DOUBTFUL_NOT_REVIEWED.format(count=len(self.doubtful), track=track,
                                                threshold=self.review_below, url=url)
        rules = [f"{kind} judgments under {value:.3f}" if value is not None
                 else f"every {kind} judgment, as none may be accepted yet"
                 for kind, value in self.escalation.items()]
        rules.append(f"other kinds under the review threshold {self.review_below:g}")
        return ESCALATED_NOT_REVIEWED.format(
            count=len(self.doubtful), track=track, url=url,
            rules="escalated by the agreement guarantee: " + "; ".join(rules))

    def problems(self, *, force: bool = False) -> list[PublishProblem]:
        """Why it may not be published (empty: it may); `force` waives only the doubt."""
        evaluation = self.evaluation
        track, campaign = evaluation.track, evaluation.track.campaign
        problems = []
        if self.stale:
            edited = self.latest_edit or evaluation.computed_at
            problems.append(PublishProblem(STALE_SNAPSHOT.format(
                track=track.slug, slug=campaign.slug,
                computed=evaluation.computed_at.astimezone(UTC).strftime(UTC_TIME),
                edited=edited.astimezone(UTC).strftime(UTC_TIME)), waivable=False))
        if self.doubtful and not force:
            url = reverse("judgments", kwargs={"slug": campaign.slug}) + "?to_review=1&doubtful=1"
            problems.append(PublishProblem(self._doubt_message(url), waivable=True))
        return problems


def evaluation_publish_check(*, evaluation: Evaluation) -> PublishCheck:
    campaign = evaluation.track.campaign
    latest_edit = JudgmentEdit.objects.filter(judgment__campaign=campaign).aggregate(
        latest=Max("edited_at"))["latest"]
    return PublishCheck(evaluation=evaluation, stale=evaluation_stale(evaluation=evaluation),
                        latest_edit=latest_edit,
                        doubtful=doubtful_unreviewed(evaluation=evaluation),
                        review_below=campaign.review_below,
                        escalation=escalation_thresholds(campaign=campaign))


def evaluation_publish_problems(
    *, evaluation: Evaluation, force: bool = False
) -> list[PublishProblem]:
    """Why this snapshot may not be published, as messages that say what to do (empty: it
    may be). `force` goes over unreviewed doubtful judgments, never over stale scores:
    publishing numbers known to be wrong is never right."""
    return evaluation_publish_check(evaluation=evaluation).problems(force=force)
