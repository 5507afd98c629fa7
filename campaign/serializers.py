from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaign.models import Campaign, GoldAnswer, Question, Track


class TrackSerializer(serializers.ModelSerializer[Track]):
    due = serializers.DateTimeField(read_only=True, help_text="UTC deadline of the track")

    class Meta:
        model = Track
        fields = ["slug", "kind", "max_runs_per_team", "answer_check", "due"]


class PhasesSerializer(serializers.Serializer[Campaign]):
    topics_release = serializers.DateTimeField()
    pr_due = serializers.DateTimeField()
    ac_due = serializers.DateTimeField()
    results_release = serializers.DateTimeField(allow_null=True)


class CampaignSerializer(serializers.ModelSerializer[Campaign]):
    phases = serializers.SerializerMethodField()
    tracks = serializers.SerializerMethodField()
    role = serializers.SerializerMethodField(
        help_text="the caller's role: organiser, participant or null (public)"
    )
    team = serializers.SerializerMethodField(help_text="the caller's team, if a participant")

    class Meta:
        model = Campaign
        fields = ["slug", "title", "description", "timezone", "phases", "tracks", "role", "team"]

    def get_phases(self, campaign: Campaign) -> dict[str, Any]:
        return PhasesSerializer(campaign).data

    def get_tracks(self, campaign: Campaign) -> list[dict[str, Any]]:
        return list(TrackSerializer(campaign.tracks.all(), many=True).data)

    def get_role(self, campaign: Campaign) -> str | None:
        role: str | None = self.context["roles"].get(campaign.pk)
        return role

    def get_team(self, campaign: Campaign) -> str | None:
        team: str | None = self.context["teams"].get(campaign.pk)
        return team


class QuestionSerializer(serializers.ModelSerializer[Question]):
    class Meta:
        model = Question
        fields = ["qid", "text", "category"]


class OrganiserQuestionSerializer(QuestionSerializer):
    gold_answers = serializers.SlugRelatedField[GoldAnswer](
        many=True, read_only=True, slug_field="text"
    )

    class Meta(QuestionSerializer.Meta):
        fields = [*QuestionSerializer.Meta.fields, "gold_answers"]
