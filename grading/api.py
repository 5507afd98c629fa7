"""REST API v1 for grading and judgments (docs/api.md). Organisers only."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django_filters.utils import translate_validation
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from campaign.api import error_responses, organiser_campaign
from campaign.models import Role
from campaign.selectors import campaign_role
from campaign.serializers import TestBankEditFormSerializer
from grading.agreement.judges import judge_agreement
from grading.models import Judgment
from grading.review.edits import EditRefused, judgment_confirm, judgment_edit
from grading.review.filters import JudgmentFilter
from grading.review.judgments import JUDGMENT_ORDERS, judgment_items
from grading.review.queue import is_doubtful
from grading.selectors import grading_progress, marked_run, marked_run_for_user
from grading.serializers import (
    JudgmentDetailSerializer,
    JudgmentEditSerializer,
    JudgmentPageSerializer,
    judgment_item_json,
    run_progress_json,
)
from grading.work.rounds import campaign_grading_queue, enqueue_grading
from infrastructure.api_errors import authenticated_user
from infrastructure.query_params import query_flag
from submissions.formats.marked_ac_run import write_marked_ac_run
from submissions.models import Run

# The same words whether the thing is missing or hidden, and no id in them (docs/access.md:
# what one may not see answers exactly as if it did not exist).
JUDGMENT_NOT_FOUND = "No such judgment."
MARKED_RUN_NOT_FOUND = (
    "No marked run here that you may see: there is one of an AC run once it has "
    "judgments, for the organisers, and for its own team once its track's leaderboard "
    "is published.")


class GradingView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary=("Grading progress: judgments done/total per AC run, (passage, "
                            "item) pairs graded/total per ranking or response run"),
                   responses={200: OpenApiResponse(description=(
                       "runs (each one's progress), done, total, needs_review, and the "
                       "agreement of the second judge per kind")),
                              **error_responses(401, 404)})
    def get(self, request: Request, slug: str) -> Response:
        campaign = organiser_campaign(request, slug)
        progress = grading_progress(campaign=campaign)
        return Response({
            "runs": [run_progress_json(p) for p in progress],
            "done": sum(p.done for p in progress), "total": sum(p.total for p in progress),
            "needs_review": sum(p.needs_review for p in progress),
            "agreement": [
                {"kind": a.kind, "between": a.between, "pairs": a.pairs,
                 "disagreements": a.disagreements, "kappa": a.kappa}
                for a in judge_agreement(campaign=campaign)
            ],
        })

    @extend_schema(request=None, summary=("Grade every pending AC, ranking and response run "
                                          "(queued for the workers)"),
                   parameters=[OpenApiParameter("all", bool, description="re-grade graded runs")],
                   responses={202: OpenApiResponse(description=(
                       "detail, runs (the names queued) and tasks (their task ids)")),
                              **error_responses(400, 401, 403, 404, 503)})
    def post(self, request: Request, slug: str) -> Response:
        campaign = organiser_campaign(request, slug)
        run_ids = campaign_grading_queue(
            campaign=campaign, include_graded=query_flag(request.query_params, "all") is True)
        tasks = enqueue_grading(run_ids)
        names = dict(Run.objects.filter(pk__in=run_ids).values_list("pk", "name"))
        return Response({"detail": f"{len(run_ids)} run(s) queued for grading",
                         "runs": [names[pk] for pk in run_ids], "tasks": tasks},
                        status=status.HTTP_202_ACCEPTED)


class JudgmentPagination(PageNumberPagination):
    """DRF's page numbers: `count`, `next`, `previous`, `results`. The page size is the
    API_PAGE_SIZE setting; a client may ask for another with `page_size`, up to the cap."""

    max_page_size = 1000
    page_size = min(api_settings.PAGE_SIZE or max_page_size, max_page_size)
    page_size_query_param = "page_size"
    invalid_page_message = "page {page_number!r}: {message}"


class JudgmentListView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary="Judgments of the campaign's runs, a page at a time", parameters=[
        OpenApiParameter("run", str, description=(
            "a run's name. Rubric grades belong to passages, shared by every run that "
            "retrieved them: they are listed with run null, and with ?run= those of the "
            "passages that run retrieved")),
        OpenApiParameter("kind", str, enum=["entailment", "answer", "rubric"]),
        OpenApiParameter("qid", str),
        OpenApiParameter("grade", int, description="rubric: the grade that counts, 0..5"),
        OpenApiParameter("edited", bool,
            description="edited or confirmed by an organiser (reviewed)"),
        OpenApiParameter("needs_review", bool),
        OpenApiParameter("disagreement", bool, description="the second judge disagrees"),
        OpenApiParameter("label", str,
            description="entailment: true/false (entailed); answer: true/false (correct)"),
        OpenApiParameter("doubtful", bool, description=(
            "needs a person: escalated where the kind has a labelled blind sample, else "
            "the judge's confidence is under the campaign's review threshold; "
            "with edited=false: the ones still to review")),
        OpenApiParameter("escalated", bool, description=(
            "under the threshold the agreement guarantee set from a blind sample")),
        OpenApiParameter("reviewed", bool, description="the same as edited"),
        OpenApiParameter("order", str, enum=list(JUDGMENT_ORDERS), description=(
            "run (default): by run, question and nugget; doubt: least sure first, "
            "unmeasured confidences after measured ones, then by judgment id")),
        OpenApiParameter("page", int, description="1 (default), 2, ...: follow `next`"),
        OpenApiParameter("page_size", int, description=(
            f"items per page (default: the API_PAGE_SIZE setting; at most "
            f"{JudgmentPagination.max_page_size})")),
    ], responses={200: JudgmentPageSerializer, **error_responses(400, 401, 404)})
    def get(self, request: Request, slug: str) -> Response:
        campaign = organiser_campaign(request, slug)
        selection = JudgmentFilter(request.query_params, campaign=campaign)
        if not selection.is_valid():
            raise translate_validation(selection.errors)
        paginator = JudgmentPagination()
        uses = paginator.paginate_queryset(selection.qs, request, view=self)
        assert uses is not None  # page_size is never 0, so there is always a page
        items = judgment_items(campaign=campaign, uses=uses)
        return paginator.get_paginated_response([judgment_item_json(item) for item in items])


def _organisers_judgment(request: Request, judgment_id: int) -> Judgment:
    """The judgment, for its campaign's organisers; for everyone else, reading or writing,
    the 404 of a missing one: no one else sees a judgment, so none is theirs to change."""
    judgment = Judgment.objects.select_related("campaign").filter(pk=judgment_id).first()
    if judgment is None or campaign_role(campaign=judgment.campaign,
                                         user=request.user) != Role.ORGANISER:
        raise exceptions.NotFound(JUDGMENT_NOT_FOUND)
    return judgment


class JudgmentEditBodyExtension(OpenApiSerializerExtension):
    """The PATCH body of a judgment as the view reads it: whole, so `note` is required
    (drf-spectacular takes every PATCH body for a partial update and marks nothing required)."""

    target_class: Any = JudgmentEditSerializer

    def map_serializer(self, auto_schema: AutoSchema, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(self.target, direction,
                                                             bypass_extensions=True)
        schema["required"] = [name for name, field in self.target.fields.items()
                              if field.required]
        return schema


class TestBankItemBodyExtension(JudgmentEditBodyExtension):
    """The PATCH body of a test-bank item (grading/rubric/api.py): whole, `note` required."""

    __test__ = False  # a schema extension, not a pytest class
    target_class = TestBankEditFormSerializer


def _refused(refused: EditRefused) -> Response:
    return Response({"detail": str(refused),
                     "errors": [{"field": refused.field, "message": str(refused)}]},
                    status=status.HTTP_400_BAD_REQUEST)


class JudgmentDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary="A judgment with its audit trail",
                   responses={200: JudgmentDetailSerializer, **error_responses(401, 404)})
    def get(self, request: Request, judgment_id: int) -> Response:
        judgment = _organisers_judgment(request, judgment_id)
        return Response(_judgment_detail(judgment))

    @extend_schema(request=JudgmentEditSerializer,
                   responses={200: JudgmentDetailSerializer,
                              **error_responses(400, 401, 404, 413, 415, 503)},
                   summary="Post-edit a judgment's label")
    def patch(self, request: Request, judgment_id: int) -> Response:
        judgment = _organisers_judgment(request, judgment_id)
        form = JudgmentEditSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(form.validated_data)
        changes: dict[str, Any] = {
            k: data[k] for k in ("entailed", "correct", "relevant", "grade", "answer")
            if k in data}
        try:
            judgment = judgment_edit(judgment=judgment, user=authenticated_user(request),
                                     changes=changes, reason=data["reason"], note=data["note"])
        except EditRefused as refused:
            return _refused(refused)
        return Response(_judgment_detail(judgment))


class JudgmentConfirmView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None, summary="Confirm a judgment's label: reviewed, the judge was right",
        responses={200: JudgmentDetailSerializer, **error_responses(401, 404, 503, described={
            400: "the judgment has no label to confirm (needs review)"})})
    def post(self, request: Request, judgment_id: int) -> Response:
        judgment = _organisers_judgment(request, judgment_id)
        try:
            judgment = judgment_confirm(judgment=judgment, user=authenticated_user(request))
        except EditRefused as refused:
            return _refused(refused)
        return Response(_judgment_detail(judgment))


def _judgment_detail(judgment: Judgment) -> dict[str, Any]:
    return {
        "id": judgment.pk, "kind": judgment.kind, "status": judgment.status,
        "label": judgment.label, "llm_label": judgment.llm_label,
        "reason": judgment.reason, "llm_reason": judgment.llm_reason,
        "nugget_reasons": judgment.nugget_reasons, "edited": judgment.edited,
        "confidence": judgment.confidence,
        "calibrated_confidence": judgment.calibrated_confidence,
        "doubtful": is_doubtful(judgment=judgment, campaign=judgment.campaign),
        "steps": judgment.steps, "input": judgment.input,
        "judge": {"model": judgment.judge_model, "prompt_version": judgment.prompt_version,
                  "decoding": judgment.decoding},
        "provenance": {"input_hash": judgment.input_hash, "raw_output": judgment.raw_output,
                       "prompt_tokens": judgment.prompt_tokens,
                       "completion_tokens": judgment.completion_tokens,
                       "latency_seconds": judgment.latency_seconds,
                       "attempts": judgment.attempts, "judged_at": judgment.judged_at},
        "history": [
            {"edited_by": e.edited_by.username if e.edited_by else None,
             "edited_at": e.edited_at, "note": e.note, "previous_label": e.previous_label,
             "previous_reason": e.previous_reason, "new_label": e.new_label,
             "new_reason": e.new_reason}
            for e in judgment.edits.select_related("edited_by")
        ],
    }


class MarkedRunView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={(200, "text/plain"): bytes, **error_responses(401, described={
        404: "no such AC run with judgments, or not yours to see: organisers see every "
             "one, a team its own once the track's leaderboard is published"})},
                   summary="The marked AC run")
    def get(self, request: Request, run_id: int) -> HttpResponse:
        run = marked_run_for_user(run_id=run_id, user=request.user)
        if run is None:
            raise exceptions.NotFound(MARKED_RUN_NOT_FOUND)
        response = HttpResponse(content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{run.name}.marked"'
        write_marked_ac_run([block.marked for block in marked_run(run=run)], response)
        return response
