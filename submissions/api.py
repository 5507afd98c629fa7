"""REST API v1 for runs (docs/api.md). Thin: parse, call one service, render."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import campaign_named, error_responses, no_such_campaign
from campaign.models import Campaign, Role
from campaign.selectors import campaign_membership, campaign_role
from infrastructure.api_errors import authenticated_user
from infrastructure.query_params import query_flag
from submissions.bulk import runs_submit_zip
from submissions.checks import RunRefused, run_check_campaign_open
from submissions.formats.upload_window import campaign_time
from submissions.models import Run, RunStatus
from submissions.overrides import OverrideRefused, quota_grant
from submissions.quota import quota_grants, quota_standing, quota_standings
from submissions.selectors import (
    run_for_user,
    runs_visible,
    shared_pr_runs,
    shared_pr_runs_bundle,
)
from submissions.serializers import (
    BulkUploadSerializer,
    QuotaGrantFormSerializer,
    QuotaGrantSerializer,
    QuotaStandingSerializer,
    RunSerializer,
    RunUploadSerializer,
)
from submissions.services import INVALID_RUN, run_submit
from submissions.throttles import UploadsPerTeamThrottle

NO_SUCH_TRACK = "campaign {campaign} has no track {track!r}; expected one of: {tracks}"
NOT_SHARED_YET = "PR runs of {campaign} are shared with all teams after {due} ({zone})"
# The same words whether the run is missing or hidden, and no id in them (docs/access.md:
# what one may not see answers exactly as if it did not exist).
RUN_NOT_FOUND = "No such run."


def _refused(refused: RunRefused) -> Response:
    return Response({"detail": refused.detail, "errors": refused.errors}, status=refused.status)


def _no_such_track(campaign: Campaign, slug: str) -> Response:
    tracks = ", ".join(campaign.tracks.values_list("slug", flat=True))
    message = NO_SUCH_TRACK.format(campaign=campaign.slug, track=slug, tracks=tracks)
    return Response({"detail": message, "errors": [{"field": "track", "message": message}]},
                    status=status.HTTP_400_BAD_REQUEST)


def _invalid(run: Run) -> Response:
    return Response(
        {
            "detail": INVALID_RUN.format(name=run.name, count=len(run.validation_report)),
            "errors": run.validation_report,
            "run": RunSerializer(run).data,
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


#: Why an upload is refused as a whole (run_submit's RunRefused, the form, the throttle).
UPLOAD_REFUSALS = {
    400: "a field missing, an unknown track, or a bad run name or description (nothing "
         "stored); or a file that breaks the format rules: stored as an invalid run, each "
         "problem in errors (with its line) and the run itself in run",
    403: "not a member of one of the campaign's teams, not your team's run, or the track "
         "not open for runs (before topics_release or after its deadline); the first, and "
         "a campaign with no track open, are refused before the file is read",
    404: "no such campaign",
    409: "the team already has as many current runs in the track as it may, or a run of "
         "this name is being replaced at this moment",
    413: "a run file larger than RUN_MAX_BYTES, or the form's other fields larger than "
         "DATA_UPLOAD_MAX_MEMORY_SIZE",
    429: "too many uploads from your team: wait as long as Retry-After says",
}


class CampaignRunsView(APIView):
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    throttle_classes = [UploadsPerTeamThrottle]  # counts POSTs only

    @extend_schema(
        responses={200: RunSerializer(many=True), **error_responses(400, 401, 404)},
        summary="Runs you may see",
        parameters=[
            OpenApiParameter("shared", bool, description="only the PR runs shared with all"),
            OpenApiParameter("current", bool, description="only current versions"),
        ],
    )
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        now = timezone.now()
        if query_flag(request.query_params, "shared"):
            runs = shared_pr_runs(campaign=campaign, now=now)
            if campaign_role(campaign=campaign, user=request.user) is None:
                runs = runs.none()
        else:
            runs = runs_visible(campaign=campaign, user=request.user, now=now,
                                include_shared=False)
        if query_flag(request.query_params, "current"):
            runs = runs.current()
        runs = runs.select_related("uploaded_by").order_by("name", "-created_at")
        return Response(RunSerializer(runs, many=True).data)

    @extend_schema(request=RunUploadSerializer, summary=(
        "Submit a run (multipart: track, name, file[, description])"),
        responses={201: RunSerializer, **error_responses(401, 415, described=UPLOAD_REFUSALS)})
    def post(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        # Before request.data reads the body: an upload from someone with no part in the
        # campaign, or to a campaign with no track open, is refused without reading the file.
        try:
            run_check_campaign_open(campaign=campaign, user=authenticated_user(request),
                                    now=timezone.now())
        except RunRefused as refused:
            return _refused(refused)
        form = RunUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data: dict[str, Any] = form.validated_data
        track = campaign.tracks.filter(slug=data["track"]).first()
        if track is None:
            return _no_such_track(campaign, data["track"])
        upload = data["file"]
        try:
            run = run_submit(track=track, user=authenticated_user(request), name=data["name"],
                             file=upload, size=upload.size, filename=upload.name or "",
                             description=data["description"])
        except RunRefused as refused:
            return _refused(refused)
        if run.status == RunStatus.INVALID:
            return _invalid(run)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)


#: A bulk upload's answer: what became of each member of the zip (for the OpenAPI document).
BULK_OUTCOME = inline_serializer(name="BulkUploadOutcome", fields={
    "detail": serializers.CharField(help_text="how many of the zip's run files were stored"),
    "errors": serializers.ListField(child=serializers.DictField(), help_text=(
        "every member's problems as {member, field, message} (line where a file is concerned)")),
    "results": serializers.ListField(required=False, child=inline_serializer(
        name="BulkUploadMember", fields={
            "member": serializers.CharField(help_text="the file's name in the zip"),
            "status": serializers.IntegerField(help_text="201 stored, else why not (4xx)"),
            "detail": serializers.CharField(),
            "errors": serializers.ListField(child=serializers.DictField()),
            "run": RunSerializer(allow_null=True),
        })),
})


class CampaignRunsBulkView(APIView):
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    throttle_classes = [UploadsPerTeamThrottle]

    @extend_schema(request=BulkUploadSerializer, summary="Submit a zip of run files",
                   responses={
                       201: BULK_OUTCOME,
                       207: OpenApiResponse(BULK_OUTCOME, description="some members stored"),
                       400: OpenApiResponse(BULK_OUTCOME, description=(
                           "no member stored (each named in results), or the form itself "
                           "refused (detail and errors only)")),
                       **error_responses(401, 415, described={
                           403: "not a member of one of the campaign's teams",
                           404: UPLOAD_REFUSALS[404],
                           413: "the form's fields other than the zip larger than "
                                "DATA_UPLOAD_MAX_MEMORY_SIZE (a zip too large is a 400)",
                           429: UPLOAD_REFUSALS[429]})})
    def post(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        form = BulkUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        track = None
        if form.validated_data["track"]:
            track = campaign.tracks.filter(slug=form.validated_data["track"]).first()
            if track is None:
                return _no_such_track(campaign, form.validated_data["track"])
        try:
            outcomes = runs_submit_zip(
                campaign=campaign, campaign_tracks=list(campaign.tracks.all()),
                user=authenticated_user(request),
                file=form.validated_data["file"],
                description=form.validated_data["description"], track=track,
            )
        except RunRefused as refused:
            return _refused(refused)
        results = [
            {"member": o.member, "status": o.status, "detail": o.detail, "errors": o.errors,
             "run": RunSerializer(o.run).data if o.run else None}
            for o in outcomes
        ]
        stored = sum(1 for o in outcomes if o.status == 201)
        code = 201 if stored == len(outcomes) else (207 if stored else 400)
        return Response({"detail": f"{stored} of {len(outcomes)} run file(s) stored",
                         "errors": [e for o in outcomes for e in
                                    ({**err, "member": o.member} for err in o.errors)],
                         "results": results}, status=code)


class RunDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: RunSerializer, **error_responses(401, 404)},
                   summary="A run: status and validation report")
    def get(self, request: Request, run_id: int) -> Response:
        run = run_for_user(run_id=run_id, user=request.user, now=timezone.now())
        if run is None:
            raise exceptions.NotFound(RUN_NOT_FOUND)
        return Response(RunSerializer(run).data)


class RunFileView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={(200, "text/plain"): bytes, **error_responses(401, 404)},
                   summary="Download a run file")
    def get(self, request: Request, run_id: int) -> FileResponse:
        run = run_for_user(run_id=run_id, user=request.user, now=timezone.now())
        if run is None or not run.file:
            raise exceptions.NotFound(RUN_NOT_FOUND)
        return FileResponse(run.file.open("rb"), as_attachment=True, filename=run.name,
                            content_type="text/plain; charset=utf-8")


class SharedPrRunsZipView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={(200, "application/zip"): bytes, **error_responses(401, described={
            404: "no such campaign, not one you take part in, or its PR runs are not "
                 "shared yet (the detail says when)"})},
        summary="All shared PR runs as one zip (after the PR deadline)")
    def get(self, request: Request, slug: str) -> FileResponse:
        # 404 for what one may not see: to someone not in the
        # campaign, exactly as for a missing campaign; to its teams before pr_due, with
        # the date, which the campaign's public timeline says anyway.
        campaign = campaign_named(request, slug)
        if campaign_role(campaign=campaign, user=request.user) is None:
            raise exceptions.NotFound(no_such_campaign(slug, request.user))
        now = timezone.now()
        if now <= campaign.pr_due:
            raise exceptions.NotFound(
                NOT_SHARED_YET.format(campaign=slug, zone=campaign.timezone,
                                      due=campaign_time(campaign.pr_due, campaign.timezone)))
        bundle = shared_pr_runs_bundle(campaign=campaign, now=now)
        return FileResponse(bundle, as_attachment=True, filename=f"{slug}-shared-pr-runs.zip",
                            content_type="application/zip")


NO_SUCH_TEAM = "campaign {campaign} has no team {team!r}"
GRANTS_ORGANISERS_ONLY = "only the organisers of campaign {campaign} may grant extra runs"

#: The quota of a campaign as one reader may see it (for the OpenAPI document).
QUOTA = inline_serializer(name="CampaignQuota", fields={
    "standings": QuotaStandingSerializer(many=True, help_text=(
        "each team's standing in each track (a participant: their own team's)")),
    "grants": QuotaGrantSerializer(many=True, help_text="extra runs granted, newest first"),
})
GRANTED = inline_serializer(name="QuotaGranted", fields={
    "detail": serializers.CharField(),
    "grant": QuotaGrantSerializer(),
    "standing": QuotaStandingSerializer(help_text="the team's standing in the track now"),
})


class CampaignQuotaView(APIView):
    """Run quotas: where teams stand, and the organisers' grants of extra runs."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary=("Where teams stand against their run quota (organisers: every "
                            "team; a participant: their own), and the grants of extra runs"),
                   responses={200: QUOTA, **error_responses(401, described={
                       404: "no such campaign, or no team of yours in it"})})
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        if campaign_role(campaign=campaign, user=request.user) == Role.ORGANISER:
            team = None
        else:
            membership = campaign_membership(campaign=campaign, user=request.user)
            if membership is None or membership.team is None:
                raise exceptions.NotFound(no_such_campaign(slug, request.user))
            team = membership.team
        return Response({
            "standings": QuotaStandingSerializer(
                quota_standings(campaign=campaign, team=team), many=True).data,
            "grants": QuotaGrantSerializer(
                quota_grants(campaign=campaign, team=team), many=True).data,
        })

    @extend_schema(summary="Organisers: grant a team extra runs in a track (audited, shown "
                           "to the team)",
                   request=QuotaGrantFormSerializer,
                   responses={201: GRANTED, **error_responses(401, 413, 415, described={
                       400: "a field missing or bad (extra_runs 1 to 100, a reason), or no "
                            "such team or track in the campaign",
                       403: "not an organiser of the campaign",
                       404: "no such campaign"})})
    def post(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        if campaign_role(campaign=campaign, user=request.user) != Role.ORGANISER:
            raise exceptions.PermissionDenied(GRANTS_ORGANISERS_ONLY.format(campaign=slug))
        form = QuotaGrantFormSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data: dict[str, Any] = form.validated_data
        track = campaign.tracks.filter(slug=data["track"]).first()
        if track is None:
            return _no_such_track(campaign, data["track"])
        team = campaign.teams.filter(name=data["team"]).first()
        if team is None:
            message = NO_SUCH_TEAM.format(campaign=slug, team=data["team"])
            return Response({"detail": message, "errors": [{"field": "team", "message": message}]},
                            status=status.HTTP_400_BAD_REQUEST)
        try:
            grant = quota_grant(team=team, track=track, extra_runs=data["extra_runs"],
                                user=authenticated_user(request), reason=data["reason"])
        except OverrideRefused as refused:
            return Response({"detail": refused.message,
                             "errors": [{"field": refused.field, "message": refused.message}]},
                            status=refused.status)
        standing = quota_standing(track=track, team=team)
        return Response({
            "detail": f"team {team.name} may have {standing.limit} runs in track {track.slug}",
            "grant": QuotaGrantSerializer(grant).data,
            "standing": QuotaStandingSerializer(standing).data,
        }, status=status.HTTP_201_CREATED)
