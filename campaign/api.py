"""REST API v1 for campaigns, questions and test banks (DESIGN.md sections 8, 10). Thin views."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.models import BankItemStatus, Campaign, Membership, Role, TestBankItem
from campaign.selectors import (
    campaign_list,
    campaign_role,
    question_list,
    questions_refusal,
    testbank_items,
)
from campaign.serializers import (
    CampaignSerializer,
    OrganiserQuestionSerializer,
    QuestionSerializer,
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

ORGANISERS_ONLY = "only the organisers of {campaign} may do this"
# The same words whether the thing is missing or hidden, and no slug or id in them.
NO_SUCH_BANK = "No such test bank."
NO_SUCH_ITEM = "No such test-bank item."
BAD_STATUS = "expected one of {expected}, found {found!r}"


def organiser_campaign(request: Request, slug: str) -> Campaign:
    """The campaign `slug`, for its organisers only (403 for everyone else)."""
    campaign = get_object_or_404(Campaign, slug=slug)
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        raise exceptions.PermissionDenied(ORGANISERS_ONLY.format(campaign=slug))
    return campaign


def _serializer_context(
    campaigns: list[Campaign], user: AbstractBaseUser | AnonymousUser
) -> dict[str, dict[int, str | None]]:
    roles: dict[int, str | None] = {}
    teams: dict[int, str | None] = {}
    if user.is_authenticated:
        memberships = Membership.objects.filter(
            user_id=user.pk, campaign__in=campaigns
        ).select_related("team")
        for membership in memberships:
            roles[membership.campaign_id] = membership.role
            teams[membership.campaign_id] = membership.team.name if membership.team else None
        if getattr(user, "is_superuser", False):
            roles = {campaign.pk: Role.ORGANISER for campaign in campaigns}
    return {"roles": roles, "teams": teams}


class CampaignListView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=CampaignSerializer(many=True), summary="Visible campaigns")
    def get(self, request: Request) -> Response:
        campaigns = list(campaign_list())
        context = _serializer_context(campaigns, request.user)
        return Response(CampaignSerializer(campaigns, many=True, context=context).data)


class CampaignDetailView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=CampaignSerializer, summary="One campaign")
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(campaign_list(), slug=slug)
        context = _serializer_context([campaign], request.user)
        return Response(CampaignSerializer(campaign, context=context).data)


class QuestionListView(APIView):
    """Questions: organisers always; participants after topics_release; the public
    after results_release. Gold answers go to organisers only."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=OrganiserQuestionSerializer(many=True), summary="Questions")
    def get(self, request: Request, slug: str) -> Response:
        campaign = get_object_or_404(Campaign, slug=slug)
        role = campaign_role(campaign=campaign, user=request.user)
        refusal = questions_refusal(campaign=campaign, role=role, now=timezone.now())
        if refusal is not None:
            if not request.user.is_authenticated:
                raise exceptions.NotAuthenticated(refusal)
            raise exceptions.PermissionDenied(refusal)
        is_organiser = role == Role.ORGANISER
        questions = question_list(campaign=campaign, with_gold=is_organiser)
        serializer_class = OrganiserQuestionSerializer if is_organiser else QuestionSerializer
        return Response(serializer_class(questions, many=True).data)


# --- test bank (DESIGN.md section 10): secret, so for everyone but the campaign's
# organisers it answers exactly as if it did not exist (DESIGN.md section 7: 404).


def _organisers_campaign_or_404(request: Request, slug: str) -> Campaign:
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


def _user(request: Request) -> User | None:
    user = request.user
    return user if isinstance(user, User) else None


def _detail(item: TestBankItem) -> dict[str, Any]:
    return dict(TestBankItemDetailSerializer(item).data)


NOT_FOUND = OpenApiResponse(description="no such campaign or item, or not its organiser")


class TestBankView(APIView):
    """A campaign's test bank: its organisers list and add items."""

    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(summary="Test-bank items (organisers; retired ones too)", parameters=[
        OpenApiParameter("qid", str, description="the items of one query"),
        OpenApiParameter("status", str, enum=list(BankItemStatus.values)),
    ], responses={200: TestBankItemSerializer(many=True), 404: NOT_FOUND})
    def get(self, request: Request, slug: str) -> Response:
        campaign = _organisers_campaign_or_404(request, slug)
        wanted = request.query_params.get("status") or None
        if wanted is not None and wanted not in BankItemStatus.values:
            raise exceptions.ValidationError({"status": [BAD_STATUS.format(
                expected=", ".join(BankItemStatus.values), found=wanted)]})
        items = testbank_items(campaign=campaign, qid=request.query_params.get("qid"),
                               status=wanted)
        return Response(TestBankItemSerializer(items, many=True).data)

    @extend_schema(summary="Add a test-bank item (audited)", request=TestBankAddSerializer,
                   responses={201: TestBankItemDetailSerializer, 404: NOT_FOUND})
    def post(self, request: Request, slug: str) -> Response:
        campaign = _organisers_campaign_or_404(request, slug)
        form = TestBankAddSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            item = testbank_add(campaign=campaign, user=_user(request), qid=data["qid"],
                                target=data["target"], text=data["text"],
                                answers=data.get("answers", []), note=data.get("note", ""))
        except TestBankRefused as refused:
            return _refused(refused)
        return Response(_detail(item), status=status.HTTP_201_CREATED)


class TestBankItemView(APIView):
    """One test-bank item: its organisers read, edit and retire it."""

    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(summary="A test-bank item with its history",
                   responses={200: TestBankItemDetailSerializer, 404: NOT_FOUND})
    def get(self, request: Request, item_id: int) -> Response:
        return Response(_detail(_organisers_item_or_404(request, item_id)))

    @extend_schema(summary="Edit a test-bank item (audited; a new text makes its grades stale)",
                   request=TestBankEditFormSerializer,
                   responses={200: TestBankItemDetailSerializer, 404: NOT_FOUND})
    def patch(self, request: Request, item_id: int) -> Response:
        item = _organisers_item_or_404(request, item_id)
        form = TestBankEditFormSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        change = ItemChange(text=data.get("text"), answers=data.get("answers"),
                            status=data.get("status"))
        try:
            item = testbank_edit(item=item, user=_user(request), change=change,
                                 note=data["note"])
        except TestBankRefused as refused:
            return _refused(refused)
        return Response(_detail(item))

    @extend_schema(summary="Retire a test-bank item (kept, with its history)", parameters=[
        OpenApiParameter("note", str, required=True, description="why it goes"),
    ], request=None, responses={200: TestBankItemDetailSerializer, 404: NOT_FOUND})
    def delete(self, request: Request, item_id: int) -> Response:
        item = _organisers_item_or_404(request, item_id)
        try:
            item = testbank_retire(item=item, user=_user(request),
                                   note=request.query_params.get("note", ""))
        except TestBankRefused as refused:
            return _refused(refused)
        return Response(_detail(item))
