"""REST API v1 for meta-evaluation (docs/rubric.md): organisers upload a manual reference of
a ranking/response track and read how the Rubric grades agree with it. Thin views; others
get what organiser endpoints answer: 403 to upload, 404 to read, 401 without a token."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import error_responses, organiser_campaign
from infrastructure.api_errors import authenticated_user
from scoring.meta_selectors import NothingToCompare, meta_evaluation, reference_summary
from scoring.reference_services import (
    ReferenceRefused,
    ReferenceUpload,
    reference_upload,
)
from scoring.serializers import RubricTrackQuerySerializer

NEITHER_FILE = "upload manual qrels, an official leaderboard, or both"
#: A level no trec_eval qrels can reach (they stop at 127) relates nothing; refused.
MAX_RELEVANT_LEVEL = 127


class ReferenceUploadSerializer(RubricTrackQuerySerializer):
    """Multipart: `track`, and `qrels` and/or `leaderboard`, `relevant_level`."""

    qrels = serializers.FileField(
        required=False, help_text="manual qrels, trec_eval's format: qid 0 docid rel")
    leaderboard = serializers.FileField(
        required=False, help_text="the official leaderboard: CSV with the header run,score")
    relevant_level = serializers.IntegerField(
        default=1, min_value=1, max_value=MAX_RELEVANT_LEVEL,
        help_text="a manual level at or above this counts as relevant (for kappa)")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("qrels") is None and attrs.get("leaderboard") is None:
            raise serializers.ValidationError(NEITHER_FILE)
        return attrs


# --- for the OpenAPI schema only -------------------------------------------------------
class ReferenceSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    qrels = serializers.DictField(allow_null=True,
                                  help_text="file, queries, judgments; null if not uploaded")
    leaderboard = serializers.DictField(allow_null=True,
                                        help_text="file, runs; null if not uploaded")
    relevant_level = serializers.IntegerField()
    uploaded_by = serializers.CharField(allow_null=True)
    uploaded_at = serializers.DateTimeField()


class CorrelationSerializer(serializers.Serializer[dict[str, Any]]):
    kendall_tau = serializers.FloatField(help_text="Kendall's tau-b (scipy)")
    spearman = serializers.FloatField(help_text="Spearman's rho, average ranks for ties")


class MetaEvaluationSerializer(serializers.Serializer[dict[str, Any]]):
    track = serializers.CharField()
    correlation = serializers.DictField(
        child=CorrelationSerializer(allow_null=True), allow_null=True,
        help_text="one per leaderboard measure, keyed as the leaderboard's rows "
                  "(rubric_cover@K), over the runs both leaderboards rank; a "
                  "measure is null with fewer than two such runs or a constant leaderboard; "
                  "null without an official leaderboard")
    kappa = serializers.FloatField(
        allow_null=True, help_text="Cohen's kappa: Rubric label >= min_grade vs manual level "
        ">= relevant_level, over the passages both judge; null without manual qrels or "
        "without such a passage")
    confusion = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()), allow_null=True,
        help_text='{"GRADE": {"LEVEL": count}}: Rubric label x manual level ("Pencils '
                  'Down!" Table 5); null without manual qrels')
    evaluation = serializers.IntegerField(help_text="the snapshot compared: the latest")
    computed_at = serializers.DateTimeField()
    min_grade = serializers.IntegerField(help_text="the snapshot's")
    relevant_level = serializers.IntegerField(help_text="the reference's")
    runs = serializers.ListField(child=serializers.CharField(),
                                 help_text="the runs both leaderboards rank")
    passages = serializers.IntegerField(allow_null=True,
                                        help_text="passages both judge (kappa's items)")
    reference = ReferenceSerializer()


class ReferenceView(APIView):
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ReferenceUploadSerializer},
        responses={201: ReferenceSerializer, **error_responses(401, 403, 415, described={
            400: "no file, an unknown or non-ranking/response track, a file over the limit, "
                 "or problems in a file (each named by its line); nothing stored",
            404: "no such campaign",
            413: "the form's fields other than the files larger than "
                 "DATA_UPLOAD_MAX_MEMORY_SIZE (a file over the limit is a 400)"})},
        summary="Upload the manual reference of a ranking/response track (replaces the "
                "previous one)")
    def post(self, request: Request, slug: str) -> Response:
        campaign = organiser_campaign(request, slug)
        form = ReferenceUploadSerializer(data=request.data, context={"campaign": campaign})
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            reference = reference_upload(
                track=data["track"], user=authenticated_user(request),
                qrels=_upload(data.get("qrels")), leaderboard=_upload(data.get("leaderboard")),
                relevant_level=data["relevant_level"])
        except ReferenceRefused as refused:
            return Response({"detail": refused.detail, "errors": refused.errors},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(reference_summary(reference), status=status.HTTP_201_CREATED)


class MetaEvaluationView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("track", str, required=True,
                                     description="a ranking or response track")],
        responses={200: MetaEvaluationSerializer, **error_responses(401, described={
            400: "track missing, unknown, or not a ranking/response track",
            404: "no such campaign, or not its organiser (the same answer); or the track "
                 "has no snapshot yet or no manual reference (detail says which)"})},
        summary="Meta-evaluation: the latest Rubric leaderboard and labels against the "
                "manual reference")
    def get(self, request: Request, slug: str) -> Response:
        campaign = organiser_campaign(request, slug)
        query = RubricTrackQuerySerializer(data=request.query_params,
                                           context={"campaign": campaign})
        query.is_valid(raise_exception=True)
        try:
            result = meta_evaluation(track=query.validated_data["track"])
        except NothingToCompare as missing:
            raise exceptions.NotFound(str(missing)) from None
        return Response(result.as_json())


def _upload(file: Any) -> ReferenceUpload | None:
    if file is None:
        return None
    return ReferenceUpload(file=file, size=file.size, filename=file.name or "")
