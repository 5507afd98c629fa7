"""Serializers of the scoring API: the publish request, and (for the OpenAPI schema only)
what the leaderboard views answer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers


class PublishRequestSerializer(serializers.Serializer[dict[str, Any]]):
    force = serializers.BooleanField(
        default=False,
        help_text="publish over doubtful judgments no organiser has reviewed (the override "
                  "is recorded); never over scores computed before the latest judgment edit")


# --- for the OpenAPI schema only -------------------------------------------------------
class LeaderboardSerializer(serializers.Serializer[dict[str, Any]]):
    """One track's snapshot (DESIGN.md section 9)."""

    track = serializers.CharField()
    kind = serializers.ChoiceField(choices=["ac", "pr"])
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
    rows = serializers.ListField(
        child=serializers.DictField(),
        help_text="one per run, best first: run, run_id, team, the track's measures, "
                  "incomplete_questions")
    statistics = serializers.DictField(help_text=(
        "measure, ci (of that measure), intervals (per interval measure), interval_method, "
        "hsd, hsd_permutations, anova"))


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
