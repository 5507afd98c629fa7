"""REST API v1 for the verification analyses of a ranking or response track: what the
organiser pages show, as JSON, from the same selectors (docs/results.md). Thin views; they
show the secret test bank, so all but organisers get the test-bank API's single 404."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api import error_responses
from campaign.models import Campaign, TestBankItem, Track
from grading.llm.schemas import RUBRIC_GRADES
from grading.rubric.api import organisers_bank_or_404
from scoring.meta_selectors import reference_current, reference_summary
from scoring.serializers import RubricTrackQuerySerializer
from scoring.verification.selectors import (
    GradeCell,
    GridRow,
    ItemAnswers,
    TestBankGaps,
    answers_by_grade,
    current_items,
    grid_rows,
    manual_qrels_gaps,
)

QID_MISSING = "name a query: ?qid=QID"
QID_UNKNOWN = "{slug} has no query {qid!r}"
NOT_AN_ITEM = "'{item}' is not a current item of query {qid}"
GAPS_QID_UNKNOWN = "the manual qrels of track {track} judge no query {qid!r}"
#: The lists compare grades with manual relevance judgments; without them there is
#: nothing to list (the page says the same, in its words).
NO_MANUAL_REFERENCE = ("track {track} of {slug} has no manual reference yet: upload manual "
                       "qrels to /api/v1/campaigns/{slug}/reference/ (with track {track}) "
                       "to list the passages missing from the test bank and the spurious "
                       "items")
NO_MANUAL_QRELS = ("track {track} of {slug} has an official leaderboard but no manual qrels: "
                   "upload manual qrels to /api/v1/campaigns/{slug}/reference/ (with track "
                   "{track}) to list the passages missing from the test bank and the "
                   "spurious items")


# --- query strings ------------------------------------------------------------------------


class QueryOfTrackSerializer(RubricTrackQuerySerializer):
    """`?track=SLUG&qid=QID`, optionally `&item=ITEM_ID&grade=G` (as the pages filter)."""

    qid = serializers.CharField(
        help_text="a query of the campaign",
        error_messages={"required": QID_MISSING, "blank": QID_MISSING})
    item = serializers.CharField(required=False, allow_blank=True,
                                 help_text="only this current item of the query (its item_id)")
    grade = serializers.ChoiceField(choices=list(RUBRIC_GRADES), required=False,
                                    allow_blank=True, help_text="only this grade")

    def validate_qid(self, value: str) -> str:
        campaign: Campaign = self.context["campaign"]
        if not campaign.questions.filter(qid=value).exists():
            raise serializers.ValidationError(QID_UNKNOWN.format(slug=campaign.slug, qid=value))
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        items = current_items(track=attrs["track"], qid=attrs["qid"])
        wanted = attrs.get("item")
        if wanted:
            items = [item for item in items if item.item_id == wanted]
            if not items:
                raise serializers.ValidationError(
                    {"item": [NOT_AN_ITEM.format(item=wanted, qid=attrs["qid"])]})
        attrs["items"] = items
        if attrs.get("grade") == "":
            attrs["grade"] = None  # `?grade=`: any grade, as the pages read it
        return attrs


class GapsQuerySerializer(RubricTrackQuerySerializer):
    """`?track=SLUG`, optionally `&qid=QID` (a query of the manual qrels)."""

    qid = serializers.CharField(required=False, allow_blank=True,
                                help_text="only this query of the manual qrels")


def _parsed(serializer_class: type[serializers.Serializer[Any]], request: Request,
            campaign: Campaign) -> dict[str, Any]:
    query = serializer_class(data=request.query_params, context={"campaign": campaign})
    query.is_valid(raise_exception=True)
    return dict(query.validated_data)


# --- JSON ---------------------------------------------------------------------------------


def _item_json(item: TestBankItem) -> dict[str, Any]:
    return {"id": item.pk, "item_id": item.item_id, "target": item.target,
            "status": item.status, "text": item.text, "answers": list(item.answers)}


def _grade_json(cell: GradeCell) -> dict[str, Any]:
    judgment = cell.judgment
    data: dict[str, Any] = {
        "item_id": cell.item.item_id, "grade": cell.grade,
        "answer": cell.answer if judgment is not None else None,
        "judgment": None if judgment is None else judgment.pk,
        "needs_review": cell.needs_review,
        "edited": judgment is not None and judgment.edited}
    label = judgment.label if judgment is not None else None
    if label is not None and "key_match" in label:
        data["key_match"] = label["key_match"]
    return data


def _grid_json(track: Track, qid: str, items: list[TestBankItem],
               rows: list[GridRow]) -> dict[str, Any]:
    return {"track": track.slug, "qid": qid, "min_grade": track.min_grade,
            "items": [_item_json(item) for item in items],
            "passages": [{"docid": row.docid,
                          "retrieved_by": [{"run": r.run, "rank": r.rank}
                                           for r in row.retrieved],
                          "grades": [_grade_json(cell) for cell in row.cells]}
                         for row in rows]}


def _item_answers_json(entry: ItemAnswers) -> dict[str, Any]:
    return {**_item_json(entry.item), "ungraded": entry.ungraded, "grades": [
        {"grade": group.grade, "passage_count": group.passages, "answers": [
            {"answer": answer.answer,
             "passages": [{"docid": docid, "judgment": judgment.pk}
                          for docid, judgment in answer.cells]}
            for answer in group.answers]}
        for group in entry.grades]}


def _gaps_json(gaps: TestBankGaps) -> dict[str, Any]:
    return {
        "missing": [{"qid": m.qid, "docid": m.docid, "level": m.level,
                     "best_grade": m.best_grade} for m in gaps.missing],
        "spurious": [{"id": s.item.pk, "item_id": s.item.item_id, "qid": s.item.question.qid,
                      "text": s.item.text, "hits": s.hits, "judged": s.judged,
                      "share": s.share} for s in gaps.spurious],
        "unjudged": gaps.unjudged,
    }


# --- for the OpenAPI schema only ----------------------------------------------------------
class VerificationItemSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField(help_text="the item's id in /api/v1/testbank/{id}/")
    item_id = serializers.CharField()
    target = serializers.CharField(help_text="questions or nuggets")
    status = serializers.CharField(help_text="draft or active (retired items are not graded)")
    text = serializers.CharField()
    answers = serializers.ListField(child=serializers.CharField(),
                                    help_text="the answer key (questions only; may be empty)")


class RetrievalSerializer(serializers.Serializer[dict[str, Any]]):
    run = serializers.CharField()
    rank = serializers.IntegerField()


class GradeCellSerializer(serializers.Serializer[dict[str, Any]]):
    item_id = serializers.CharField()
    grade = serializers.IntegerField(
        allow_null=True, help_text="0..5 (an organiser's edit wins; a reply that never "
        "parsed counts as scoring counts it); null: not graded on the item's current text")
    answer = serializers.CharField(allow_null=True,
                                   help_text="the extracted answer; null when not graded")
    judgment = serializers.IntegerField(
        allow_null=True, help_text="the judgment to post-edit (PATCH /api/v1/judgments/{id}/)")
    needs_review = serializers.BooleanField(
        help_text="the judge's reply never parsed and no organiser has given a grade")
    edited = serializers.BooleanField(help_text="an organiser has post-edited the grade")
    key_match = serializers.BooleanField(
        required=False, help_text="only where the campaign checks answers against a key")


class GridPassageSerializer(serializers.Serializer[dict[str, Any]]):
    docid = serializers.CharField()
    retrieved_by = RetrievalSerializer(many=True, help_text="the track's runs that rate it")
    grades = GradeCellSerializer(many=True, help_text="one per item, in the items' order")


class GridSerializer(serializers.Serializer[dict[str, Any]]):
    track = serializers.CharField()
    qid = serializers.CharField()
    min_grade = serializers.IntegerField(help_text="an item counts as answered at this grade "
                                         "or above")
    items = VerificationItemSerializer(many=True, help_text="the query's current items")
    passages = GridPassageSerializer(
        many=True, help_text="the query's pool: what grading rates of the track's current "
        "accepted runs (a ranking's top depth, every segment of a response), by docid")


class AnswerPassageSerializer(serializers.Serializer[dict[str, Any]]):
    docid = serializers.CharField()
    judgment = serializers.IntegerField()


class AnswerSerializer(serializers.Serializer[dict[str, Any]]):
    answer = serializers.CharField(help_text="as the judge or an organiser wrote it")
    passages = AnswerPassageSerializer(many=True, help_text="the passages that gave it")


class GradeGroupSerializer(serializers.Serializer[dict[str, Any]]):
    grade = serializers.IntegerField()
    passage_count = serializers.IntegerField()
    answers = AnswerSerializer(many=True, help_text="most passages first")


class ItemAnswersSerializer(VerificationItemSerializer):
    ungraded = serializers.IntegerField(
        help_text="pooled passages not graded on the item's current text")
    grades = GradeGroupSerializer(many=True, help_text="highest grade first")


class AnswersSerializer(serializers.Serializer[dict[str, Any]]):
    track = serializers.CharField()
    qid = serializers.CharField()
    min_grade = serializers.IntegerField()
    items = ItemAnswersSerializer(many=True)


class MissingPassageSerializer(serializers.Serializer[dict[str, Any]]):
    qid = serializers.CharField()
    docid = serializers.CharField()
    level = serializers.IntegerField(help_text="the manual label")
    best_grade = serializers.IntegerField(help_text="its highest grade over the query's items")


class SpuriousItemSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    item_id = serializers.CharField()
    qid = serializers.CharField()
    text = serializers.CharField()
    hits = serializers.ListField(child=serializers.CharField(),
                                 help_text="non-relevant passages graded min_grade or above")
    judged = serializers.IntegerField(help_text="non-relevant passages graded on the item")
    share = serializers.FloatField(help_text="len(hits) / judged")


class TestBankGapsSerializer(serializers.Serializer[dict[str, Any]]):
    __test__ = False  # a serializer, not a pytest class

    track = serializers.CharField()
    qid = serializers.CharField(allow_null=True, help_text="the query asked for; null: all")
    min_grade = serializers.IntegerField()
    relevant_level = serializers.IntegerField(help_text="a manual label at or above this "
                                              "counts as relevant")
    reference = serializers.DictField(help_text="the manual reference compared (as "
                                      "/reference/ answers it)")
    missing = MissingPassageSerializer(
        many=True, help_text="passages the manual qrels call relevant on which no current "
        "item reaches min_grade, by query and docid")
    spurious = SpuriousItemSerializer(
        many=True, help_text="items at min_grade or above on passages the manual qrels call "
        "non-relevant, largest share first")
    unjudged = serializers.IntegerField(
        help_text="relevant passages with no grade at all (no run retrieved them within the "
        "depth): in neither list")


#: The meanings of the analyses' error statuses (campaign.api.error_responses).
NOT_FOUND = {404: "no such campaign, or not its organiser (the same answer to everyone "
                  "else, whether or not the campaign exists)"}
TRACK = OpenApiParameter("track", str, required=True, description="a ranking or response track")
QID = OpenApiParameter("qid", str, required=True, description="a query of the campaign")
FILTERS = [OpenApiParameter("item", str, description="only this current item (its item_id)"),
           OpenApiParameter("grade", int, enum=list(RUBRIC_GRADES),
                            description="only this grade")]
BAD_QUERY = {400: "track or qid missing or unknown, the track not a ranking/response "
                  "track, or a bad item or grade (named)"}


class GridView(APIView):
    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(
        parameters=[TRACK, QID, *FILTERS],
        responses={200: GridSerializer,
                   **error_responses(401, described={**BAD_QUERY, **NOT_FOUND})},
        summary="The grid of one query: the track's pooled passages by the query's current "
                "items, each cell a grade and an extracted answer (organisers)")
    def get(self, request: Request, slug: str) -> Response:
        campaign = organisers_bank_or_404(request, slug)
        query = _parsed(QueryOfTrackSerializer, request, campaign)
        track: Track = query["track"]
        rows = grid_rows(track=track, qid=query["qid"], items=query["items"],
                         grade=query.get("grade"))
        return Response(_grid_json(track, query["qid"], query["items"], rows))


class AnswersView(APIView):
    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(
        parameters=[TRACK, QID, *FILTERS],
        responses={200: AnswersSerializer,
                   **error_responses(401, described={**BAD_QUERY, **NOT_FOUND})},
        summary="Verify grading: each current item's extracted answers over the query's "
                "pool, grouped by grade, highest first (organisers)")
    def get(self, request: Request, slug: str) -> Response:
        campaign = organisers_bank_or_404(request, slug)
        query = _parsed(QueryOfTrackSerializer, request, campaign)
        track: Track = query["track"]
        answers = answers_by_grade(track=track, qid=query["qid"], items=query["items"],
                                   grade=query.get("grade"))
        return Response({"track": track.slug, "qid": query["qid"], "min_grade": track.min_grade,
                         "items": [_item_answers_json(entry) for entry in answers]})


class TestBankGapsView(APIView):
    __test__ = False  # a view, not a pytest class
    permission_classes = [permissions.AllowAny]  # everyone else gets the 404 below

    @extend_schema(
        parameters=[TRACK, OpenApiParameter("qid", str,
                                            description="only this query of the manual qrels")],
        responses={200: TestBankGapsSerializer, **error_responses(401, described={
            **NOT_FOUND,
            400: "track missing or unknown, or a query the manual qrels do not judge (named)",
            409: "the track has no manual qrels yet (detail says what to upload, and where)"})},
        summary="Missing from the test bank and spurious items: the current grades against "
                "the track's manual qrels (organisers)")
    def get(self, request: Request, slug: str) -> Response:
        campaign = organisers_bank_or_404(request, slug)
        query = _parsed(GapsQuerySerializer, request, campaign)
        track: Track = query["track"]
        reference = reference_current(track=track)
        qrels = reference.qrels if reference is not None else None
        if reference is None or qrels is None:
            missing = NO_MANUAL_REFERENCE if reference is None else NO_MANUAL_QRELS
            detail = missing.format(track=track.slug, slug=campaign.slug)
            return Response({"detail": detail, "errors": [{"field": "", "message": detail}]},
                            status=status.HTTP_409_CONFLICT)
        qid = query.get("qid") or None
        if qid is not None and qid not in qrels:
            raise exceptions.ValidationError(
                {"qid": [GAPS_QID_UNKNOWN.format(track=track.slug, qid=qid)]})
        gaps = manual_qrels_gaps(track=track, qrels=qrels,
                                 relevant_level=reference.relevant_level, qid=qid)
        return Response({"track": track.slug, "qid": qid, "min_grade": track.min_grade,
                         "relevant_level": reference.relevant_level,
                         "reference": reference_summary(reference), **_gaps_json(gaps)})
