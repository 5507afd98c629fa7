"""Evaluation snapshots: the scores of every run of a track, traceable to their judgments."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from campaign.models import Track
from submissions.models import Run


class Evaluation(models.Model):
    """One scoring of a track, a snapshot: every current run's scores at one moment, with the
    judge, edit counts and a fingerprint of the labels used, so that a published leaderboard
    can always be traced to its judgments (docs/results.md, "Snapshots")."""

    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="evaluations")
    computed_at = models.DateTimeField(auto_now_add=True)
    judge = models.CharField(max_length=300, blank=True, help_text="model / prompt versions")
    edited_judgments = models.PositiveIntegerField(default=0)
    # How many judgment edits the campaign had when scoring began to read its judgments.
    # A count, not a time: an edit is stamped when its transaction starts, and by the
    # worker's or the web server's clock, so "edited after computed_at" can miss an edit
    # that committed after the judgments were read. Edits are only ever added, so the
    # snapshot counts every edit iff the campaign still has this many (scoring/selectors.py).
    judgment_edits_seen = models.PositiveIntegerField(default=0)
    needs_review = models.PositiveIntegerField(default=0)
    fingerprint = models.CharField(max_length=64, help_text="sha256 of the labels used")
    questions = models.PositiveIntegerField(default=0)
    # Statistics over the topic-by-run matrix of the main measure (CIs, Tukey HSD, ANOVA).
    statistics = models.JSONField(default=dict, blank=True)
    qrels = models.JSONField(default=dict, blank=True,
                             help_text="PR: derived qrels used; ranking/response: Rubric-Qrels")
    # What a RUBRIC snapshot's numbers depend on besides the grades:
    # the track's min_grade, label, cover_k and depth then; a later edit of the track
    # leaves the published numbers explained. Empty for PR and AC snapshots.
    params = models.JSONField(default=dict, blank=True,
                              help_text="ranking/response: min_grade, label, cover_k, depth")
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    # How the labels behind it were decided when it was published, per kind: accepted
    # under the agreement guarantee, left to the judge, or by people (docs/agreement.md).
    labels = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["track", "-computed_at", "-id"]
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return f"{self.track} scored {self.computed_at:%Y-%m-%d %H:%M}"


class PublishOverride(models.Model):
    """A snapshot published over doubtful judgments no organiser had reviewed (`force`), kept
    apart from its publication stamp so that withdrawing and publishing again never erase it."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE,
                                   related_name="overrides")
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
    )
    published_at = models.DateTimeField()
    review_below = models.FloatField(help_text="the campaign's review threshold then")
    doubtful_unreviewed = models.PositiveIntegerField(
        help_text="judgments under the threshold that no organiser had reviewed")
    judgments = models.JSONField(default=list, help_text="their ids")

    class Meta:
        ordering = ["evaluation", "published_at", "id"]
        get_latest_by = "published_at"

    def __str__(self) -> str:
        return (f"{self.evaluation} published over {self.doubtful_unreviewed} unreviewed "
                f"doubtful judgment(s)")


class RunScore(models.Model):
    """One run's aggregate and per-question scores in an evaluation."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="scores")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="scores")
    aggregates = models.JSONField()
    per_question = models.JSONField(help_text="measure -> qid -> value")
    incomplete_questions = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["evaluation", "run__name"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "run"], name="one_score_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.run} in {self.evaluation_id}"


class ManualReference(models.Model):
    """The organisers' manual qrels and/or official leaderboard of a ranking or response track,
    for meta-evaluation; an upload replaces the current one, which is kept, marked
    `replaced_at` (docs/results.md, "Meta-evaluation of a RUBRIC track")."""

    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="references")
    qrels = models.JSONField(null=True, blank=True,
                             help_text="qid -> docid -> manual level; null if not uploaded")
    leaderboard = models.JSONField(null=True, blank=True,
                                   help_text="run -> official score; null if not uploaded")
    relevant_level = models.PositiveIntegerField(
        default=1, help_text="a manual level at or above this counts as relevant")
    qrels_filename = models.CharField(max_length=255, blank=True)
    leaderboard_filename = models.CharField(max_length=255, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
    )
    uploaded_at = models.DateTimeField()
    replaced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["track", "-uploaded_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["track"], condition=models.Q(replaced_at=None),
                                    name="one_current_reference_per_track"),
        ]

    def __str__(self) -> str:
        return f"manual reference of {self.track} uploaded {self.uploaded_at:%Y-%m-%d %H:%M}"
