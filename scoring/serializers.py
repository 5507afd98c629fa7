"""Serializers of the scoring API: the publish request, and (for the OpenAPI schema only)
what the leaderboard views answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from campaign.models import Campaign, Track
from campaign.text_fields import CleanTextField


class PublishRequestSerializer(serializers.Serializer[dict[str, Any]]):
    force = serializers.BooleanField(
        default=False,
        help_text="publish over doubtful judgments no organiser has reviewed (the override "
                  "is recorded); never over scores computed before the latest judgment edit")


#: A ranking/response track named in a query string (`?track=SLUG`).
TRACK_MISSING = "name a ranking or response track: ?track=SLUG"
TRACK_UNKNOWN = "{slug} has no track {track!r}; its ranking/response tracks: {tracks}"
TRACK_NOT_RUBRIC = ("track {track} of {slug} is of kind {kind}; Rubric-Qrels and graded "
                    "passages belong to ranking/response tracks: {tracks}")


class RubricTrackQuerySerializer(serializers.Serializer[dict[str, Any]]):
    """`?track=SLUG`: a ranking or response track of the campaign in the context."""

    track = CleanTextField(
        line_breaks=False, help_text="a ranking or response track's slug",
        error_messages={"required": TRACK_MISSING, "blank": TRACK_MISSING})

    def validate_track(self, value: str) -> Track:
        campaign: Campaign = self.context["campaign"]
        tracks = {track.slug: track for track in campaign.tracks.order_by("slug")}
        rubric = ", ".join(slug for slug, t in tracks.items() if t.is_rubric) or "none"
        track = tracks.get(value)
        if track is None:
            raise serializers.ValidationError(TRACK_UNKNOWN.format(
                slug=campaign.slug, track=value, tracks=rubric))
        if not track.is_rubric:
            raise serializers.ValidationError(TRACK_NOT_RUBRIC.format(
                track=value, slug=campaign.slug, kind=track.kind, tracks=rubric))
        return track


# --- for the OpenAPI schema only -------------------------------------------------------
class LeaderboardSerializer(serializers.Serializer[dict[str, Any]]):
    """One track's snapshot (docs/api.md)."""

    track = serializers.CharField()
    kind = serializers.ChoiceField(choices=["ac", "pr", "ranking", "response"])
    evaluation = serializers.IntegerField(help_text="the snapshot's id")
    judge = serializers.CharField(allow_blank=True, help_text="model (prompt versions)")
    computed_at = serializers.DateTimeField()
    published = serializers.BooleanField()
    stale = serializers.BooleanField(
        help_text="computed before the latest judgment edit: it may not be published until "
                  "it is recomputed")
    edited_judgments = serializers.IntegerField()
    needs_review = serializers.IntegerField(help_text="answers waiting for an organiser")
    fingerprint = serializers.CharField(help_text="sha256 of the labels used")
    questions = serializers.IntegerField()
    min_grade = serializers.IntegerField(
        required=False, help_text="ranking/response: an item counts at this grade or above")
    # Declared fields leave the class (DRF's metaclass pops them), so the name `label`
    # shadows no Field attribute at run time; mypy sees only the class body.
    label = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["max", "count"], required=False,
        help_text="ranking/response: the Rubric-Qrels label rule")
    cover_k = serializers.IntegerField(
        required=False, allow_null=True,
        help_text="ranking/response: the track's cover_k, which Rubric-Cover's key in the "
                  "rows carries (rubric_cover@K); a response's value counts all its segments "
                  "whatever K (null: a response snapshot that recorded none, rubric_cover@10)")
    depth = serializers.IntegerField(required=False,
                                     help_text="ranking/response: passages graded per query")
    rows = serializers.ListField(
        child=serializers.DictField(),
        help_text="one per run, best first: run, run_id, team, the track's measures "
                  "(Rubric-Cover as rubric_cover@K, K the track's cover_k), "
                  "incomplete_questions")
    statistics = serializers.DictField(help_text=(
        "measure, ci (of that measure), intervals (per interval measure), interval_method, "
        "anova (of measure), hsd (randomised Tukey HSD pairs on hsd_measure, the ranking "
        "measure), hsd_measure, hsd_more (measure -> pairs, for the organisers' picks), "
        "hsd_permutations"))
    labels = serializers.DictField(help_text=(
        "per kind of judgment, how its labels were decided when published: judgments, "
        "accepted (under the agreement guarantee), by_judge, by_people, guarantee (target, "
        "risk, sample, threshold) or review_below"))


class LeaderboardsSerializer(serializers.Serializer[dict[str, Any]]):
    leaderboards = LeaderboardSerializer(many=True)


# 409: the snapshot may not be published yet; nothing changed. (Inline: a serializer
# class may not declare a field named `errors`.)
PUBLISH_REFUSED = inline_serializer(name="PublishRefused", fields={
    "detail": serializers.CharField(),
    "problems": serializers.ListField(child=serializers.CharField(),
                                      help_text="each reason, with what to do about it"),
    "errors": serializers.ListField(child=serializers.DictField(),
                                    help_text="the same, as {field, message} items"),
})
