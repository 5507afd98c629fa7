"""REST API v1 for campaigns and questions (docs/api.md); thin views. The test-bank API is
grading's (grading/rubric/api.py), since a bank change queues grading."""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import exceptions, permissions, serializers
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
#: Django's words for a missing campaign (get_object_or_404), said too where a campaign's
#: organiser-only data is asked for by anyone else: exactly as if it did not exist.
CAMPAIGN_NOT_FOUND = "No Campaign matches the given query."
#: A participant's endpoints name the campaign asked for and the user's own instead
#: (campaigns are public, so naming them gives nothing away).
NO_SUCH_CAMPAIGN = "no campaign {slug!r} that you take part in; {yours}"

#: The API's one error shape (infrastructure.api_errors), for the OpenAPI document. Inline: a
#: serializer class may not declare a field named `errors`.
API_ERROR = inline_serializer(name="ApiError", fields={
    "detail": serializers.CharField(help_text="what went wrong, in words"),
    "errors": serializers.ListField(
        child=serializers.DictField(),
        help_text="each problem as {field, message} (with line where a file is concerned)"),
})
#: What each error status means anywhere in the API; a view may say more of its own.
ERROR_MEANINGS = {
    400: "bad input: each problem named in errors",
    401: "no token, or a token that is not valid",
    403: "signed in, and the campaign is there to see, but this change is not yours to make",
    404: "no such thing, or none that you may see (the two answer alike)",
    406: "no such format here (?format= or Accept): the detail names those offered",
    409: "refused in the present state; nothing changed",
    413: "the request body is too large",
    415: "a body without a Content-Type, or of one this operation does not take (see its "
         "request body)",
    429: "too many requests: wait as long as Retry-After says",
    503: "the task queue does not answer: the work was not queued (what else the request "
         "changed is saved); the detail says how to ask again",
}


def error_responses(*statuses: int,
                    described: Mapping[int, str] | None = None) -> dict[int, OpenApiResponse]:
    """The documented error responses of a view: each status with the API's error shape
    and its meaning (`described` overrides a meaning with the view's own words)."""
    words = {**ERROR_MEANINGS, **(described or {})}
    return {status: OpenApiResponse(API_ERROR, description=words[status])
            for status in sorted({*statuses, *(described or {})})}


def no_such_campaign(slug: str, user: AbstractBaseUser | AnonymousUser) -> str:
    """A missing (or not to be seen) campaign named, with the ones the user takes part in."""
    mine = sorted(set(Membership.objects.filter(user_id=user.pk)
                      .values_list("campaign__slug", flat=True))) if user.is_authenticated else []
    yours = (f"yours: {', '.join(mine)}" if mine
             else "you take part in none (GET /api/v1/campaigns/ lists them all)")
    return NO_SUCH_CAMPAIGN.format(slug=slug, yours=yours)


def campaign_named(request: Request, slug: str) -> Campaign:
    """The campaign `slug`; a 404 that names it and the user's campaigns otherwise."""
    campaign = campaign_list().filter(slug=slug).first()
    if campaign is None:
        raise exceptions.NotFound(no_such_campaign(slug, request.user))
    return campaign


def organiser_campaign(request: Request, slug: str) -> Campaign:
    """The campaign `slug`, for its organisers only: to anyone else a read is the 404 of a
    missing campaign, a write a 403, as the campaign itself is public (docs/access.md)."""
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        raise exceptions.NotFound(CAMPAIGN_NOT_FOUND)
    if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
        if request.method in permissions.SAFE_METHODS:
            raise exceptions.NotFound(CAMPAIGN_NOT_FOUND)
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

    @extend_schema(responses={200: CampaignSerializer(many=True), **error_responses(401)},
                   summary="Visible campaigns")
    def get(self, request: Request) -> Response:
        campaigns = list(campaign_list())
        context = _serializer_context(campaigns, request.user)
        return Response(CampaignSerializer(campaigns, many=True, context=context).data)


class CampaignDetailView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: CampaignSerializer, **error_responses(401, 404)},
                   summary="One campaign")
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        context = _serializer_context([campaign], request.user)
        return Response(CampaignSerializer(campaign, context=context).data)


# The OpenAPI document's one shape of a question, for every role: OrganiserQuestionSerializer
# for organisers, QuestionSerializer (no gold_answers) for everyone else. Not oneOf the
# two: an organiser's question would match both, and oneOf wants exactly one.
@extend_schema_serializer(component_name="Question")
class QuestionShapesSerializer(QuestionSerializer):
    """A question; its gold answers are sent to the campaign's organisers only."""

    gold_answers = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="organisers only: the secret gold answers (absent for everyone else)")

    class Meta(QuestionSerializer.Meta):
        fields = [*QuestionSerializer.Meta.fields, "gold_answers"]


#: One question of the list as each role gets it (drf-spectacular shows it in a list).
QUESTION_EXAMPLES = [
    OpenApiExample("participant or public", response_only=True,
                   value={"qid": "D001", "text": "Who directed Alien?", "category": ""}),
    OpenApiExample("organiser", response_only=True,
                   value={"qid": "D001", "text": "Who directed Alien?", "category": "",
                          "gold_answers": ["Ridley Scott"]}),
]


class QuestionListView(APIView):
    """Questions, with gold answers for organisers only; before they are released to the
    caller, a 404 whose detail says when (docs/access.md, "What each role sees")."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        summary="Questions (organisers: with their gold answers)",
        responses={
            200: OpenApiResponse(QuestionShapesSerializer(many=True), examples=QUESTION_EXAMPLES,
                                 description="gold_answers for organisers only"),
            **error_responses(401, described={
                404: "no such campaign, or its questions are not released to you yet "
                     "(the detail says when)"}),
        })
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        role = campaign_role(campaign=campaign, user=request.user)
        refusal = questions_refusal(campaign=campaign, role=role, now=timezone.now())
        if refusal is not None:
            raise exceptions.NotFound(refusal)
        is_organiser = role == Role.ORGANISER
        questions = question_list(campaign=campaign, with_gold=is_organiser)
        serializer_class = OrganiserQuestionSerializer if is_organiser else QuestionSerializer
        return Response(serializer_class(questions, many=True).data)
