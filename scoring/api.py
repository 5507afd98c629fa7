"""REST API v1 for scoring and leaderboards (docs/api.md). Thin views."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, permissions, renderers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import campaign_named, error_responses, organiser_campaign
from campaign.models import Campaign, Track
from grading.selectors import ac_runs
from grading.work.dispatch import enqueue_scoring
from infrastructure.api_errors import authenticated_user
from scoring.exports import (
    graded_jsonl,
    leaderboard_latex,
    leaderboards_csv,
    marked_runs_zip,
    qrels_text,
    res_zip,
    rubric_qrels_text,
)
from scoring.models import Evaluation
from scoring.rubric_selectors import rubric_qrels_visible, rubric_track
from scoring.selectors import (
    campaign_qrels,
    evaluation_latest,
    leaderboard,
    leaderboards_visible,
    run_scores_visible,
)
from scoring.serializers import (
    PUBLISH_REFUSED,
    LeaderboardSerializer,
    LeaderboardsSerializer,
    PublishRequestSerializer,
    RubricTrackQuerySerializer,
)
from scoring.services import PublishRefused, evaluation_publish, evaluation_unpublish
from submissions.models import Run
from submissions.selectors import run_for_user

# The same words whether the run is missing, hidden or not scored, and no id in them
# (docs/access.md: what one may not see answers exactly as if it did not exist).
NO_SCORES = "No scores of this run that you may see yet."
NO_RUBRIC_QRELS = "no Rubric-Qrels of track {track} of {slug} that you may see"
#: The graded pool of a ranking/response track in the Autograding Workbench's JSONL.
GRADED_JSONL = "graded.jsonl"
NOT_PUBLISHED = "the {track} leaderboard of {slug} was not published; see problems"
FORCE_HINT = ', or publish with {"force": true}'
NO_SUCH_TRACK = "No track {track!r} in {slug}."


class CsvRenderer(renderers.BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: object, accepted_media_type: str | None = None,
               renderer_context: object = None) -> bytes:
        return data.encode() if isinstance(data, str) else str(data).encode()


class LeaderboardsView(APIView):
    permission_classes = [permissions.AllowAny]
    renderer_classes = [renderers.JSONRenderer, CsvRenderer]

    @extend_schema(summary="Leaderboards you may see (published; organisers: all)",
                   parameters=[OpenApiParameter("format", str, enum=["json", "csv"])],
                   responses={200: LeaderboardsSerializer, (200, "text/csv"): bytes,
                              **error_responses(401, 404, 406)})
    def get(self, request: Request, slug: str) -> Response:
        campaign = campaign_named(request, slug)
        boards = leaderboards_visible(campaign=campaign, user=request.user, now=timezone.now())
        if request.accepted_renderer.format == "csv":
            return Response(leaderboards_csv(boards), content_type="text/csv; charset=utf-8",
                            headers={"Content-Disposition":
                                     f'attachment; filename="{slug}-leaderboards.csv"'})
        return Response({"leaderboards": [board.as_json() for board in boards]})


class PublishView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=PublishRequestSerializer,
        responses={200: LeaderboardSerializer, 409: OpenApiResponse(
            PUBLISH_REFUSED, description="Refused: the scores are stale, or rest on "
            "doubtful judgments no organiser has reviewed (force goes over those only)"),
            **error_responses(400, 401, 403, 413, 415, described={
                404: "no such campaign, or the track has not been scored yet"})},
        summary="Publish a track's latest leaderboard (DELETE withdraws it)")
    def post(self, request: Request, slug: str, track: str) -> Response:
        campaign = organiser_campaign(request, slug)
        form = PublishRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        scored = campaign.tracks.filter(slug=track).first()
        evaluation = evaluation_latest(track=scored) if scored else None
        if evaluation is None:
            raise exceptions.NotFound(f"track {track} of {slug} has not been scored yet")
        try:
            publication = evaluation_publish(evaluation=evaluation,
                                             user=authenticated_user(request),
                                             force=form.validated_data["force"])
        except PublishRefused as refused:
            problems = [p.message + (FORCE_HINT if p.waivable else "") for p in refused.problems]
            return Response({"detail": NOT_PUBLISHED.format(track=track, slug=slug),
                             "problems": problems,
                             "errors": [{"field": "", "message": m} for m in problems]},
                            status=status.HTTP_409_CONFLICT)
        return Response(leaderboard(evaluation=publication.evaluation).as_json())

    @extend_schema(request=None, responses={204: None, **error_responses(401, 403, described={
                       404: "no such campaign, or no such track in it"})},
                   summary="Withdraw a track's published leaderboard (none published: 204)")
    def delete(self, request: Request, slug: str, track: str) -> Response:
        campaign = organiser_campaign(request, slug)
        withdrawn = campaign.tracks.filter(slug=track).first()
        if withdrawn is None:
            raise exceptions.NotFound(NO_SUCH_TRACK.format(track=track, slug=slug))
        for evaluation in Evaluation.objects.filter(track=withdrawn, published_at__isnull=False):
            evaluation_unpublish(evaluation=evaluation)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ScoringView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, summary="Recompute every leaderboard (queued for a worker)",
                   responses={202: OpenApiResponse(description="detail, and task (its id)"),
                              **error_responses(401, 403, 404, 503)})
    def post(self, request: Request, slug: str) -> Response:
        campaign = organiser_campaign(request, slug)
        task_id = enqueue_scoring(campaign.pk)
        return Response({"detail": f"scoring of {slug} queued", "task": task_id},
                        status=status.HTTP_202_ACCEPTED)


class RunScoresView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(summary="A run's aggregate and per-question scores",
                   responses={200: OpenApiResponse(description=(
                       "run, evaluation, computed_at, aggregates {measure: value}, "
                       "per_question {measure: {qid: value}}, incomplete_questions")),
                              **error_responses(401, described={
                                  404: "no such run, not one you may see, or no scores of "
                                       "it that you may see yet"})})
    def get(self, request: Request, run_id: int) -> Response:
        now = timezone.now()
        run = run_for_user(run_id=run_id, user=request.user, now=now)
        score = run_scores_visible(run=run, user=request.user, now=now) if run else None
        if run is None or score is None:
            raise exceptions.NotFound(NO_SCORES)
        return Response({"run": run.name, "evaluation": score.evaluation_id,
                         "computed_at": score.evaluation.computed_at,
                         "aggregates": score.aggregates, "per_question": score.per_question,
                         "incomplete_questions": score.incomplete_questions})


class QrelsView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={(200, "text/plain"): bytes, **error_responses(401, 404)},
                   summary="Derived PR qrels")
    def get(self, request: Request, slug: str) -> HttpResponse:
        campaign = organiser_campaign(request, slug)
        return HttpResponse(qrels_text(campaign_qrels(campaign=campaign)),
                            content_type="text/plain; charset=utf-8")


def _rubric_track(request: Request, campaign: Campaign) -> Track:
    """The ranking/response track `?track=` names (400 naming `track` otherwise)."""
    query = RubricTrackQuerySerializer(data=request.query_params,
                                       context={"campaign": campaign})
    query.is_valid(raise_exception=True)
    track: Track = query.validated_data["track"]
    return track


class RubricQrelsView(APIView):
    # Everyone may ask; who gets the qrels is the leaderboard's rule (rubric_qrels_visible)
    # and anyone else gets the 404 of what does not exist.
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("track", str, required=True,
                                     description="a ranking or response track")],
        responses={(200, "text/plain"): bytes, **error_responses(401, described={
            400: "track missing, unknown, or not a ranking/response track",
            404: "no such campaign, or its leaderboard is not published to you"})},
        summary="Rubric-Qrels of a ranking/response track (trec_eval qrels)")
    def get(self, request: Request, slug: str) -> HttpResponse:
        campaign = campaign_named(request, slug)
        track = _rubric_track(request, campaign)
        qrels = rubric_qrels_visible(track=track, user=request.user, now=timezone.now())
        if qrels is None:
            raise exceptions.NotFound(NO_RUBRIC_QRELS.format(track=track.slug, slug=slug))
        return HttpResponse(rubric_qrels_text(qrels), content_type="text/plain; charset=utf-8")


class ExportView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("track", str, description="graded.jsonl: a ranking "
                                     "or response track")],
        responses={(200, "application/octet-stream"): bytes, **error_responses(401, described={
            400: "graded.jsonl: track missing, unknown, or not a ranking/response track",
            404: "no such campaign or export, or not its organiser"})},
        summary="Exports: res.zip, marked.zip, leaderboards.tex, graded.jsonl?track=SLUG")
    def get(self, request: Request, slug: str, name: str) -> HttpResponseBase:
        campaign = organiser_campaign(request, slug)
        if name == GRADED_JSONL:
            track = _rubric_track(request, campaign)
            stream = StreamingHttpResponse(graded_jsonl(rubric_track(track=track)),
                                           content_type="application/jsonl; charset=utf-8")
            stream["Content-Disposition"] = (
                f'attachment; filename="{slug}-{track.slug}-{GRADED_JSONL}"')
            return stream
        if name == "res.zip":
            runs = Run.objects.filter(track__campaign=campaign).of_kinds(shared=True) \
                .current().accepted()
            body, kind = res_zip(runs.order_by("name")), "application/zip"
        elif name == "marked.zip":
            body, kind = marked_runs_zip(ac_runs(campaign=campaign)), "application/zip"
        elif name == "leaderboards.tex":
            boards = leaderboards_visible(campaign=campaign, user=request.user,
                                          now=timezone.now())
            body = "\n".join(leaderboard_latex(board) for board in boards).encode()
            kind = "application/x-tex"
        else:
            raise exceptions.NotFound(f"no export {name!r}; expected res.zip, marked.zip, "
                                      f"leaderboards.tex or {GRADED_JSONL}?track=SLUG")
        response = HttpResponse(body, content_type=kind)
        response["Content-Disposition"] = f'attachment; filename="{slug}-{name}"'
        return response
