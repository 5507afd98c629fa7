"""REST API v1 for a RUBRIC campaign's test bank (docs/rubric.md). Thin views; to everyone but
the campaign's organisers the bank answers as if it did not exist (404, docs/access.md)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import error_responses
from campaign.models import BankItemStatus, Campaign, Role, TestBankItem
from campaign.selectors import campaign_role, testbank_items
from campaign.serializers import (
    TestBankAddSerializer,
    TestBankEditFormSerializer,
    TestBankItemDetailSerializer,
    TestBankItemSerializer,
)
from campaign.testbank import (
    ItemChange,
    TestBankRefused,
    testbank_add,
    testbank_edit,
    testbank_retire,
)
from campaign.text_fields import text_problem
from grading.rubric.bank_changes import testbank_changed
from grading.serializers import TestBankGenerateSerializer
from grading.work.dispatch import enqueue_testbank_generation
from infrastructure.api_errors import authenticated_user

# The same words whether the thing is missing or hidden, and no slug or id in them.
NO_SUCH_BANK = "No such test bank."
NO_SUCH_ITEM = "No such test-bank item."
BAD_STATUS = "expected one of {expected}, found {found!r}"


def organisers_bank_or_404(request: Request, slug: str) -> Campaign:
    """The campaign `slug`, for its organisers; a 404 for everyone else, as for a missing
    campaign (the verification analyses, which show the bank, answer the same)."""
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None or campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise exceptions.NotFound(NO_SUCH_BANK)
    return campaign


def _organisers_item_or_404(request: Request, item_id: int) -> TestBankItem:
    # An id past 64 bits is no item (and would overflow SQLite's integers).
    item = (TestBankItem.objects.select_related("campaign", "question", "created_by")
            .filter(pk=item_id).first()) if item_id < 2**63 else None
    if item is None or campaign_role(campaign=item.campaign, user=request.user) != Role.ORGANISER:
        raise exceptions.NotFound(NO_SUCH_ITEM)
    return item


def _refused(refused: TestBankRefused) -> Response:
    return Response({"detail": str(refused),
                     "errors": [{"field": refused.field, "message": str(refused)}]},
                    status=status.HTTP_400_BAD_REQUEST)


def _detail(item: TestBankItem) -> dict[str, Any]:
    return dict(TestBankItemDetailSerializer(item).data)


#: The meanings of the bank's error statuses (campaign.api.error_responses).
BANK_NOT_FOUND = {404: "no such campaign, or not its organiser (the same answer)"}
ITEM_NOT_FOUND = {404: "no such item, or not an organiser of its campaign (the same answer)"}
BAD_EDIT = {400: "a field missing or not valid (each named in errors), or the change "
                 "refused by the bank's rules (the field named)"}


class TestBankView(APIView):
    """A campaign's test bank: its organisers list and add items."""

    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(summary="Test-bank items (organisers; retired ones too)", parameters=[
        OpenApiParameter("qid", str, description="the items of one query"),
        OpenApiParameter("status", str, enum=list(BankItemStatus.values)),
    ], responses={200: TestBankItemSerializer(many=True), **error_responses(401, described={
        **BANK_NOT_FOUND, 400: "a status or qid that is not valid (named)"})})
    def get(self, request: Request, slug: str) -> Response:
        campaign = organisers_bank_or_404(request, slug)
        wanted = request.query_params.get("status") or None
        if wanted is not None and wanted not in BankItemStatus.values:
            raise exceptions.ValidationError({"status": [BAD_STATUS.format(
                expected=", ".join(BankItemStatus.values), found=wanted)]})
        qid = request.query_params.get("qid") or None
        if qid is not None and (problem := text_problem(qid, what="qid", line_breaks=False,
                                                        cap=None)):
            # A qid holds no control characters; PostgreSQL could not even compare a NUL.
            raise exceptions.ValidationError({"qid": [problem]})
        items = testbank_items(campaign=campaign, qid=qid, status=wanted)
        return Response(TestBankItemSerializer(items, many=True).data)

    @extend_schema(summary="Add a test-bank item (audited; graded at once if runs are graded)",
                   request=TestBankAddSerializer,
                   responses={201: TestBankItemDetailSerializer,
                              **error_responses(401, 413, 415, 503,
                                                described={**BAD_EDIT, **BANK_NOT_FOUND})})
    def post(self, request: Request, slug: str) -> Response:
        campaign = organisers_bank_or_404(request, slug)
        form = TestBankAddSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            item = testbank_add(campaign=campaign, user=authenticated_user(request),
                                qid=data["qid"], target=data["target"], text=data["text"],
                                answers=data.get("answers", []), note=data.get("note", ""))
        except TestBankRefused as refused:
            return _refused(refused)
        testbank_changed(campaign=campaign, items=[item])
        return Response(_detail(item), status=status.HTTP_201_CREATED)


class TestBankItemView(APIView):
    """One test-bank item: its organisers read, edit and retire it."""

    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(summary="A test-bank item with its history",
                   responses={200: TestBankItemDetailSerializer,
                              **error_responses(401, described=ITEM_NOT_FOUND)})
    def get(self, request: Request, item_id: int) -> Response:
        return Response(_detail(_organisers_item_or_404(request, item_id)))

    @extend_schema(summary="Edit a test-bank item (audited; its pairs are graded again)",
                   request=TestBankEditFormSerializer,
                   responses={200: TestBankItemDetailSerializer,
                              **error_responses(401, 413, 415, 503,
                                                described={**BAD_EDIT, **ITEM_NOT_FOUND})})
    def patch(self, request: Request, item_id: int) -> Response:
        item = _organisers_item_or_404(request, item_id)
        form = TestBankEditFormSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        change = ItemChange(text=data.get("text"), answers=data.get("answers"),
                            status=data.get("status"))
        try:
            item = testbank_edit(item=item, user=authenticated_user(request), change=change,
                                 note=data["note"])
        except TestBankRefused as refused:
            return _refused(refused)
        testbank_changed(campaign=item.campaign, items=[item])
        return Response(_detail(item))

    @extend_schema(summary="Retire a test-bank item (kept, with its history)", parameters=[
        OpenApiParameter("note", str, required=True, description="why it goes"),
    ], request=None, responses={200: TestBankItemDetailSerializer, **error_responses(
        401, 503, described={**ITEM_NOT_FOUND, 400: "no note, one that is not valid, or the item "
                                                   "already retired"})})
    def delete(self, request: Request, item_id: int) -> Response:
        item = _organisers_item_or_404(request, item_id)
        try:
            item = testbank_retire(item=item, user=authenticated_user(request),
                                   note=request.query_params.get("note", ""))
        except TestBankRefused as refused:
            return _refused(refused)
        testbank_changed(campaign=item.campaign, items=[item])
        return Response(_detail(item))


class TestBankGenerateView(APIView):
    __test__ = False  # a view, not a pytest class
    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(
        request=TestBankGenerateSerializer,
        summary="Draft test-bank items with the judge for the queries that have none",
        responses={202: OpenApiResponse(description='{"detail", "task"}: the task id'),
                   **error_responses(401, 413, 415, 503, described={
                       **BANK_NOT_FOUND, 400: "a bad target or n, named"})})
    def post(self, request: Request, slug: str) -> Response:
        campaign = organisers_bank_or_404(request, slug)
        form = TestBankGenerateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        target, n = form.validated_data["target"], form.validated_data["n"]
        task = enqueue_testbank_generation(campaign_id=campaign.pk, target=target, n=n,
                                           user_id=authenticated_user(request).pk)
        return Response({"detail": f"drafting {n} {target} per query without items",
                         "task": task}, status=status.HTTP_202_ACCEPTED)
