"""REST API v1 for campaigns and questions (DESIGN.md section 8). Thin views.

The test-bank API (DESIGN.md section 10) is grading's (grading/testbank_api.py): a
change to the bank queues the grading of the items it changed.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.models import Campaign, Membership, Role
from campaign.selectors import (
    campaign_list,
    campaign_role,
    question_list,
    questions_refusal,
)
from campaign.serializers import (
    CampaignSerializer,
    OrganiserQuestionSerializer,
    QuestionSerializer,
)

ORGANISERS_ONLY = "only the organisers of {campaign} may do this"


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
