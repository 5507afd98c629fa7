"""REST API v1 for organisers' overrides of a run. Thin: parse, call
grading.review.run_overrides, render. Here rather than in submissions.api because a re-run and a
withdrawal queue grading and scoring, which submissions may not import (pyproject.toml)."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import error_responses
from campaign.models import Role
from campaign.selectors import campaign_membership, campaign_role
from grading.review.run_overrides import run_override
from infrastructure.api_errors import authenticated_user
from submissions.api import RUN_NOT_FOUND
from submissions.models import Run, RunActionKind
from submissions.overrides import OverrideRefused
from submissions.quota import run_actions
from submissions.selectors import run_for_user
from submissions.serializers import RunActionSerializer, RunOverrideFormSerializer, RunSerializer

ORGANISERS_ONLY = "only the organisers of campaign {campaign} may override its runs"

#: What an override answers (for the OpenAPI document).
OVERRIDE_DONE = inline_serializer(name="RunOverrideDone", fields={
    "detail": serializers.CharField(help_text="what was done, in words"),
    "action": RunActionSerializer(),
    "run": RunSerializer(),
    "tasks": serializers.ListField(child=serializers.CharField(), help_text=(
        "the tasks queued: the grading (rerun) or the scoring (withdraw, restore)")),
})
OVERRIDE_REFUSALS = {
    400: "no reason, a reason with control characters or too long, or an unknown action",
    403: "you may see the run (your team's) but only the organisers may override it",
    404: "no such run, or none that you may see",
    409: "the run's state does not allow it (replaced, invalid, already withdrawn, not "
         "failed, a PR run to re-run, or a judge not yet validated for the campaign)",
}
ACTION_DONE = {
    RunActionKind.RERUN: "run {name} queued for grading again",
    RunActionKind.WITHDRAW: "run {name} withdrawn: out of the leaderboards (scoring queued) "
                            "and the quota",
    RunActionKind.RESTORE: "run {name} restored: back in the leaderboards (scoring queued) "
                           "and the quota",
    RunActionKind.CHARGE: "the failure of run {name} is now its own: it counts against the "
                          "quota",
    RunActionKind.REFUND: "the failure of run {name} is now the platform's: it does not "
                          "count against the quota",
}


def _run_of_team_or_organiser(request: Request, run_id: int) -> tuple[Run, bool]:
    """The run and whether the user organises its campaign, for its organisers and its
    own team only: a shared PR run is visible to every team, its overrides are not."""
    run = run_for_user(run_id=run_id, user=request.user, now=timezone.now())
    if run is None:
        raise exceptions.NotFound(RUN_NOT_FOUND)
    campaign = run.track.campaign
    if campaign_role(campaign=campaign, user=request.user) == Role.ORGANISER:
        return run, True
    membership = campaign_membership(campaign=campaign, user=request.user)
    if membership is None or membership.team_id != run.team_id:
        raise exceptions.NotFound(RUN_NOT_FOUND)
    return run, False


class RunOverridesView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary="The organisers' actions on a run (who, when, why)",
                   responses={200: RunActionSerializer(many=True), **error_responses(
                       401, described={404: "no such run, or not one of your team's (its "
                                            "organisers see every run's)"})})
    def get(self, request: Request, run_id: int) -> Response:
        run, _ = _run_of_team_or_organiser(request, run_id)
        return Response(RunActionSerializer(run_actions(run=run), many=True).data)

    @extend_schema(summary=("Organisers: re-run, withdraw, restore a run, or charge / "
                            "refund its failure (audited, shown to its team)"),
                   request=RunOverrideFormSerializer,
                   responses={200: OpenApiResponse(OVERRIDE_DONE, description=(
                                  "done (charge, refund: nothing to queue)")),
                              202: OpenApiResponse(OVERRIDE_DONE, description=(
                                  "done, and grading or scoring queued")),
                              **error_responses(401, 413, 415, 503,
                                                described=OVERRIDE_REFUSALS)})
    def post(self, request: Request, run_id: int) -> Response:
        run, organiser = _run_of_team_or_organiser(request, run_id)
        if not organiser:
            raise exceptions.PermissionDenied(
                ORGANISERS_ONLY.format(campaign=run.track.campaign.slug))
        form = RunOverrideFormSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        action = RunActionKind(form.validated_data["action"])
        try:
            done = run_override(run=run, action=action, user=authenticated_user(request),
                                reason=form.validated_data["reason"])
        except OverrideRefused as refused:
            return Response({"detail": refused.message,
                             "errors": [{"field": refused.field, "message": refused.message}]},
                            status=refused.status)
        run.refresh_from_db()
        return Response({"detail": ACTION_DONE[action].format(name=run.name),
                         "action": RunActionSerializer(done.action).data,
                         "run": RunSerializer(run).data, "tasks": list(done.tasks)},
                        status=status.HTTP_202_ACCEPTED if done.tasks else status.HTTP_200_OK)
