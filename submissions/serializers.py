from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaign.text_fields import NOTE, CleanTextField
from submissions.models import Run


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

    class Meta:
        model = Run
        fields = [
            "id", "name", "team", "track", "kind", "status", "is_current", "description",
            "original_filename", "sha256", "size", "questions", "records", "uploaded_by",
            "created_at", "replaced_at", "validation_report", "download", "failure_reason",
        ]
        extra_kwargs = {"failure_reason": {
            "help_text": "why grading failed (the judge's first error); empty unless failed"}}

    def get_download(self, run: Run) -> str | None:
        return f"/api/v1/runs/{run.pk}/file/" if run.file else None


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
