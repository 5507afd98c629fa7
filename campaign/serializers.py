from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaign.bank_limits import MAX_ANSWERS
from campaign.models import (
    Campaign,
    GoldAnswer,
    Question,
    TestBankEdit,
    TestBankItem,
    Track,
)
from campaign.selectors import phase_applies
from campaign.text_fields import ANSWER, NOTE, CleanTextField
from campaign.vocabulary import PromptTarget

RUBRIC_ONLY = "ranking/response tracks only"


class TrackSerializer(serializers.ModelSerializer[Track]):
    due = serializers.DateTimeField(read_only=True, help_text="UTC deadline of the track")

    class Meta:
        model = Track
        fields = ["slug", "kind", "max_runs_per_team", "answer_check", "due", "depth",
                  "min_grade", "label", "cover_k", "significance_tests"]
        extra_kwargs = {
            "depth": {"help_text": f"passages graded per query ({RUBRIC_ONLY})"},
            "min_grade": {"help_text": f"an item counts at this grade or above ({RUBRIC_ONLY})"},
            "label": {"help_text": f"Rubric-Qrels label: max or count ({RUBRIC_ONLY})"},
            "cover_k": {"help_text": f"the k of Rubric-Cover@k ({RUBRIC_ONLY})"},
            "significance_tests": {"help_text": "measures a randomised Tukey HSD tests "
                                               "besides the ranking measure"},
        }


class PhasesSerializer(serializers.Serializer[Campaign]):
    topics_release = serializers.DateTimeField()
    pr_due = serializers.DateTimeField(
        allow_null=True, help_text="null when the campaign has no PR track")
    ac_due = serializers.DateTimeField(
        allow_null=True, help_text="null when the campaign has no AC track")
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
        phases = dict(PhasesSerializer(campaign).data)
        tracks = list(campaign.tracks.all())
        for key in phases:
            if not phase_applies(key, tracks):
                phases[key] = None  # stored to fill the column; no deadline of this campaign
        return phases

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


class TestBankEditSerializer(serializers.ModelSerializer[TestBankEdit]):
    user = serializers.SlugRelatedField[Any](read_only=True, allow_null=True,
                                                        slug_field="username")

    class Meta:
        model = TestBankEdit
        fields = ["action", "user", "at", "note", "previous_text", "previous_answers",
                  "previous_status", "text", "answers"]


class TestBankItemSerializer(serializers.ModelSerializer[TestBankItem]):
    qid = serializers.CharField(source="question.qid", read_only=True)
    created_by = serializers.SlugRelatedField[Any](read_only=True, allow_null=True,
                                                   slug_field="username")
    answers = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = TestBankItem
        fields = ["id", "qid", "item_id", "target", "text", "answers", "status", "text_hash",
                  "created_by", "created_at", "updated_at"]
        extra_kwargs = {"text_hash": {"help_text": (
            "sha256 of the text: grades are given to a text, so a new hash makes the "
            "item's earlier grades stale")}}


class TestBankItemDetailSerializer(TestBankItemSerializer):
    history = TestBankEditSerializer(source="edits", many=True, read_only=True)

    class Meta(TestBankItemSerializer.Meta):
        fields = [*TestBankItemSerializer.Meta.fields, "history"]


# Input forms: the service checks the same rules (one message for API and pages, and for
# the campaign file), but a bad value is refused here first, naming its field, and a body
# of megabytes is cut short (campaign/text_fields.py; caps from the settings).
_answers = serializers.ListField(
    child=CleanTextField(trim_whitespace=False, allow_blank=True, cap=ANSWER),
    max_length=MAX_ANSWERS, required=False)


class TestBankAddSerializer(serializers.Serializer[Any]):
    qid = CleanTextField(max_length=64, line_breaks=False)
    target = serializers.ChoiceField(choices=[t.value for t in PromptTarget])
    text = CleanTextField(trim_whitespace=False, cap=ANSWER)
    answers = _answers
    note = CleanTextField(required=False, allow_blank=True, trim_whitespace=False, cap=NOTE)


class TestBankEditFormSerializer(serializers.Serializer[Any]):
    text = CleanTextField(required=False, trim_whitespace=False, cap=ANSWER)
    answers = _answers
    status = serializers.ChoiceField(choices=["draft", "active"], required=False,
                                     help_text="activate a reviewed draft (retire: DELETE)")
    note = CleanTextField(trim_whitespace=False, cap=NOTE,
                          help_text="why: required, kept in the item's history")
