"""Writes for scoring: evaluate every track of a campaign into a snapshot; publish it."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from campaign.kinds import KINDS, behaviour, kind_of
from campaign.models import Campaign
from grading.agreement.report import label_provenance
from scoring.models import Evaluation, PublishOverride
from scoring.selectors import (
    PublishProblem,
    evaluation_publish_check,
    judgment_edit_count,
    runs_behind,
)
from scoring.track_scoring import CampaignScoring, ScoringProgress, Unwatched


def campaign_score(
    *, campaign: Campaign, progress: ScoringProgress | None = None
) -> list[Evaluation]:
    """Score every track, each by its kind's scorer (campaign.kinds): the kinds whose runs answer
    first, as their judgments give the others' qrels, then the rest in the registry's order."""
    # Counted before any judgment is read: an edit that commits later makes these
    # snapshots stale even if the reads below happened to see it (a needless re-score at
    # worst), and one that committed earlier is in what they read.
    scoring = CampaignScoring(campaign=campaign,
                              judgment_edits_seen=judgment_edit_count(campaign=campaign),
                              progress=progress or Unwatched())
    order = sorted(KINDS.values(), key=lambda kind: not kind.answers)
    tracks = [track for kind in order
              for track in campaign.tracks.filter(kind=kind.value).order_by("slug")]
    scoring.progress.planned(len(scoring.ac_runs) + len(tracks))
    evaluations = []
    for track in tracks:
        evaluations.append(behaviour(kind_of(track.kind).scorer)(track=track, scoring=scoring))
        scoring.progress.done(f"scored track {track.slug}")
    return evaluations


class PublishRefused(Exception):
    """A snapshot that may not be published yet; `problems` say why and what to do."""

    def __init__(self, problems: list[PublishProblem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems

    @property
    def waivable(self) -> bool:
        """Would publishing with `force` go through (only unreviewed doubt stands)?"""
        return all(p.waivable for p in self.problems)


@dataclass(frozen=True)
class Publication:
    evaluation: Evaluation
    override: PublishOverride | None  # set when `force` went over unreviewed doubt


@transaction.atomic
def evaluation_publish(
    *, evaluation: Evaluation, user: AbstractBaseUser, force: bool = False
) -> Publication:
    """Publish a snapshot: participants see it now, the public from results_release. Refused
    (PublishRefused, nothing written) while stale or resting on unreviewed doubt; `force` goes
    over the doubt only, recorded (docs/results.md, "Publishing")."""
    # Locked: two organisers publishing at once leave one consistent stamp.
    evaluation = Evaluation.objects.select_for_update(of=("self",)).select_related(
        "track__campaign").get(pk=evaluation.pk)
    check = evaluation_publish_check(evaluation=evaluation)
    problems = check.problems(force=force)
    if problems:
        raise PublishRefused(problems)
    now = timezone.now()
    override = None
    if check.doubtful:
        override = PublishOverride(
            evaluation=evaluation, published_by_id=user.pk, published_at=now,
            review_below=check.review_below, doubtful_unreviewed=len(check.doubtful),
            judgments=check.doubtful,
        )
        override.full_clean()
        override.save()
    evaluation.published_at = now
    evaluation.published_by_id = user.pk
    evaluation.labels = label_provenance(campaign=evaluation.track.campaign,
                                         runs=runs_behind(evaluation))
    evaluation.save(update_fields=["published_at", "published_by", "labels"])
    return Publication(evaluation=evaluation, override=override)


def evaluation_unpublish(*, evaluation: Evaluation) -> Evaluation:
    evaluation.published_at = None
    evaluation.published_by = None
    evaluation.save(update_fields=["published_at", "published_by"])
    return evaluation
