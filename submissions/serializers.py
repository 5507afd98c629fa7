from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaign.text_fields import NOTE, CleanTextField
from submissions.models import (
    MAX_GRANT,
    FailureKind,
    QuotaGrant,
    Run,
    RunAction,
    RunActionKind,
    RunStatus,
)


class ProblemSerializer(serializers.Serializer[dict[str, Any]]):
    line = serializers.IntegerField(help_text="1-based line; 0 for the whole file")
    field = serializers.CharField(help_text="the part of the line, in the format's words")
    message = serializers.CharField(help_text="what was found and what was expected")


class RunSerializer(serializers.ModelSerializer[Run]):
    team = serializers.CharField(source="team.name")
    track = serializers.CharField(source="track.slug")
    kind = serializers.CharField(source="track.kind")
    uploaded_by = serializers.CharField(source="uploaded_by.username", default=None)
    validation_report = ProblemSerializer(many=True)
    download = serializers.SerializerMethodField()
    failure_kind = serializers.SerializerMethodField(help_text=(
        "whose fault the grading failure was: platform (the run does not count against "
        "the team's quota) or run (it does); null unless failed"))

    class Meta:
        model = Run
        fields = [
            "id", "name", "team", "track", "kind", "status", "is_current", "description",
            "original_filename", "sha256", "size", "questions", "records", "uploaded_by",
            "created_at", "replaced_at", "validation_report", "download", "failure_reason",
            "failure_kind", "withdrawn",
        ]
        extra_kwargs = {
            "failure_reason": {
                "help_text": "why grading failed (the judge's first error); empty unless failed"},
            "withdrawn": {"help_text": "withdrawn by the organisers: out of the leaderboards "
                                       "and the quota (see the run's overrides)"},
        }

    def get_download(self, run: Run) -> str | None:
        return f"/api/v1/runs/{run.pk}/file/" if run.file else None

    @extend_schema_field(serializers.ChoiceField(choices=FailureKind.choices, allow_null=True))
    def get_failure_kind(self, run: Run) -> str | None:
        return run.failure_kind if run.status == RunStatus.FAILED else None


class RunUploadSerializer(serializers.Serializer[dict[str, Any]]):
    track = serializers.SlugField(help_text="the track's slug, e.g. pr, ac, or a ranking or "
                                            "response track's")
    name = CleanTextField(
        max_length=100, line_breaks=False,
        help_text="the run name: WASEDA-AC-1 (PR/AC), WASEDA-bm25 (ranking/response)",
    )
    file = serializers.FileField(help_text="the run file, UTF-8, in the official format")
    description = CleanTextField(required=False, allow_blank=True, default="", cap=NOTE,
                                 help_text="how the run was made (shown with it)")


class BulkUploadSerializer(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField(help_text="a zip of run files, each named by its run name")
    description = CleanTextField(required=False, allow_blank=True, default="", cap=NOTE,
                                 help_text="the description of every run in the zip")
    track = serializers.SlugField(
        required=False, allow_blank=True, default="",
        help_text="put every run in this track; default: the track each run's name (or, "
                  "for ranking/response runs, content) points to",
    )


class RunActionSerializer(serializers.ModelSerializer[RunAction]):
    """An organiser's action on a run: what, who, when, why (its team sees it)."""

    run = serializers.CharField(source="run.name")
    run_id = serializers.IntegerField(source="run.pk")
    by = serializers.CharField(source="by.username", default=None)

    class Meta:
        model = RunAction
        fields = ["id", "run", "run_id", "action", "reason", "by", "at"]


class RunOverrideFormSerializer(serializers.Serializer[dict[str, Any]]):
    action = serializers.ChoiceField(choices=RunActionKind.choices, help_text=(
        "rerun: grade again; withdraw / restore: out of / back into the leaderboards and "
        "the quota; charge / refund: a failed run's failure is the run's own (it counts "
        "against the quota) / the platform's (it does not)"))
    reason = CleanTextField(cap=NOTE, help_text="why: the team reads it beside the action")


class QuotaGrantSerializer(serializers.ModelSerializer[QuotaGrant]):
    """Extra runs an organiser granted a team in a track: how many, who, when, why."""

    team = serializers.CharField(source="team.name")
    track = serializers.CharField(source="track.slug")
    by = serializers.CharField(source="by.username", default=None)

    class Meta:
        model = QuotaGrant
        fields = ["id", "team", "track", "extra_runs", "reason", "by", "at"]


class QuotaGrantFormSerializer(serializers.Serializer[dict[str, Any]]):
    team = serializers.CharField(max_length=100, help_text="the team's name")
    track = serializers.SlugField(help_text="the track's slug")
    extra_runs = serializers.IntegerField(min_value=1, max_value=MAX_GRANT,
                                          help_text="how many runs more the team may have")
    reason = CleanTextField(cap=NOTE, help_text="why: the team reads it beside the grant")


class RefundedRunSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    reason = serializers.CharField(help_text="why its grading failed (the platform's fault)")


class QuotaStandingSerializer(serializers.Serializer[Any]):
    """Where a team stands against its quota in a track (submissions.quota)."""

    team = serializers.CharField()
    track = serializers.CharField()
    max_runs = serializers.IntegerField(help_text="the track's max_runs_per_team")
    granted = serializers.IntegerField(help_text="extra runs granted by the organisers")
    limit = serializers.IntegerField(help_text="how many runs may count: max_runs + granted")
    counted = serializers.ListField(child=serializers.CharField(),
                                    help_text="the current runs that count")
    refunded = RefundedRunSerializer(many=True, help_text=(
        "current runs that do not count: their grading failed for a platform reason"))
    withdrawn = serializers.ListField(child=serializers.CharField(), help_text=(
        "current runs withdrawn by the organisers (not counted)"))
    highest_number = serializers.IntegerField(help_text=(
        "R2C2: the highest run number the team may use (limit + runs not counted)"))
