"""REST API v1 for blind samples and the agreement report: organisers only, and a 404
for everyone else, as if none existed. A blind item never shows the judge's label,
confidence or reason."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import error_responses
from campaign.models import Campaign, Role
from campaign.selectors import campaign_role
from campaign.text_fields import ANSWER, NOTE, CleanTextField
from grading.agreement.cascade import cascade_to_second_judge
from grading.agreement.report import agreement_report, report_json
from grading.agreement.samples import (
    MAX_SAMPLE_SIZE,
    SampleRefused,
    blind_item_label,
    blind_sample_draw,
)
from grading.llm.schemas import RUBRIC_GRADES
from grading.models import BlindItem, BlindSample, JudgmentKind
from grading.review.edits import EditRefused
from infrastructure.api_errors import authenticated_user

NOT_FOUND = "Not found."


class BlindSampleDrawSerializer(serializers.Serializer[dict[str, Any]]):
    kind = serializers.ChoiceField(choices=JudgmentKind.values)
    size = serializers.IntegerField(min_value=1, max_value=MAX_SAMPLE_SIZE)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**63 - 1,
                                    help_text="drawn at random (and recorded) when absent")


class BlindLabelSerializer(serializers.Serializer[dict[str, Any]]):
    entailed = serializers.BooleanField(required=False, help_text="entailment")
    correct = serializers.BooleanField(required=False, help_text="answer")
    relevant = serializers.ListField(child=serializers.IntegerField(min_value=1),
                                     required=False, help_text="answer: relevant NuggetNums")
    grade = serializers.IntegerField(required=False, min_value=min(RUBRIC_GRADES),
                                     max_value=max(RUBRIC_GRADES), help_text="rubric: 0..5")
    answer = CleanTextField(required=False, allow_blank=True, cap=ANSWER)
    note = CleanTextField(required=False, allow_blank=True, default="", cap=NOTE)


def _campaign(request: Request, slug: str) -> Campaign:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None or campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise exceptions.NotFound(NOT_FOUND)
    return campaign


def _organisers(request: Request, campaign: Campaign) -> None:
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise exceptions.NotFound(NOT_FOUND)


def blind_item_json(item: BlindItem, kind: str) -> dict[str, Any]:
    """What a person labelling blind may see: the judge's inputs, and their own label."""
    return {"id": item.pk, "judgment": item.judgment_id, "kind": kind,
            "position": item.position, "inputs": item.judgment.input,
            "labelled": item.labelled, "label": item.label, "note": item.note}


def blind_sample_json(sample: BlindSample) -> dict[str, Any]:
    items = sample.items.select_related("judgment")
    return {"id": sample.pk, "kind": sample.kind, "seed": sample.seed,
            "population": sample.population, "created_at": sample.created_at,
            "items": [blind_item_json(item, sample.kind) for item in items]}


def _refused(refused: SampleRefused | EditRefused) -> Response:
    return Response({"detail": str(refused),
                     "errors": [{"field": refused.field, "message": str(refused)}]},
                    status=status.HTTP_400_BAD_REQUEST)


class BlindSampleListView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=BlindSampleDrawSerializer,
                   summary="Draw a seeded uniform sample of one kind of judgment to label blind",
                   responses={201: OpenApiResponse(description=(
                       "id, kind, seed, population and the items, without the judge's labels")),
                              **error_responses(400, 401, 404, 413, 415)})
    def post(self, request: Request, slug: str) -> Response:
        campaign = _campaign(request, slug)
        form = BlindSampleDrawSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            sample = blind_sample_draw(campaign=campaign, user=authenticated_user(request),
                                       **form.validated_data)
        except SampleRefused as refused:
            return _refused(refused)
        return Response(blind_sample_json(sample), status=status.HTTP_201_CREATED)


class BlindSampleView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary="A blind sample's items: the judge's inputs, never its labels",
                   responses={200: OpenApiResponse(description="as the draw answers"),
                              **error_responses(401, 404)})
    def get(self, request: Request, sample_id: int) -> Response:
        sample = BlindSample.objects.select_related("campaign").filter(pk=sample_id).first()
        if sample is None:
            raise exceptions.NotFound(NOT_FOUND)
        _organisers(request, sample.campaign)
        return Response(blind_sample_json(sample))


class BlindItemLabelView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=BlindLabelSerializer,
                   summary="Label a sampled judgment (it also settles the judgment, as an edit)",
                   responses={200: OpenApiResponse(description="the item, with its label"),
                              **error_responses(400, 401, 404, 413, 415, 503)})
    def post(self, request: Request, blind_item_id: int) -> Response:
        item = (BlindItem.objects.select_related("sample__campaign", "judgment")
                .filter(pk=blind_item_id).first())
        if item is None:
            raise exceptions.NotFound(NOT_FOUND)
        _organisers(request, item.sample.campaign)
        form = BlindLabelSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        note = data.pop("note")
        try:
            item = blind_item_label(item=item, user=authenticated_user(request),
                                    changes=data, note=note)
        except EditRefused as refused:
            return _refused(refused)
        return Response(blind_item_json(item, item.sample.kind))


class AgreementView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary=("Agreement with people per kind, and what the guarantee accepts "
                            "and escalates"),
                   responses={200: OpenApiResponse(description=(
                       "{kind: {n, agreement, interval, kappa, confusion, bins, threshold, "
                       "coverage, accepted, escalated, unreviewed, target, risk, ...}}")),
                              **error_responses(401, 404)})
    def get(self, request: Request, slug: str) -> Response:
        campaign = _campaign(request, slug)
        return Response({line.kind: report_json(line, campaign)
                         for line in agreement_report(campaign=campaign)})


class CascadeView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None,
                   summary=("Let the second judge decide the escalated judgments the "
                            "agreement guarantee allows it (and withdraw what it no longer does)"),
                   responses={200: OpenApiResponse(description="decided, withdrawn"),
                              **error_responses(401, 404, 503)})
    def post(self, request: Request, slug: str) -> Response:
        campaign = _campaign(request, slug)
        outcome = cascade_to_second_judge(campaign=campaign)
        return Response({"decided": outcome.decided, "withdrawn": outcome.withdrawn})
