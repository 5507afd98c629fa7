from __future__ import annotations

from typing import Any

from rest_framework import serializers

from campaign.text_fields import ANSWER, NOTE, CleanTextField
from campaign.vocabulary import PromptTarget
from grading.llm.prompts import DRAFT_TARGET, MAX_GENERATED_ITEMS
from grading.llm.rubric import UNPARSED_GRADE
from grading.llm.schemas import RUBRIC_GRADES
from grading.models import JudgmentKind
from grading.review.judgments import JudgmentItem
from grading.selectors import RunProgress, counted_grade


def judgment_item_json(item: JudgmentItem) -> dict[str, Any]:
    """A judgment as the API lists it, one use of it: ids, the label fields of its kind, reason,
    confidence, doubt, steps, judge and input (docs/review.md, "The judgments list")."""
    judgment = item.judgment
    label = judgment.label or {}
    data: dict[str, Any] = {
        "id": judgment.pk, "kind": judgment.kind, "run": item.run, "qid": item.qid,
    }
    if judgment.kind == JudgmentKind.RUBRIC:
        # A rubric judgment: docid, item_id, grade, answer (and key_match where the
        # campaign checks answers against a key); a reply that never parsed counts 1.
        data.update({"docid": item.docid, "item_id": item.item_id,
                     "grade": counted_grade(judgment.label), "answer": label.get("answer", "")})
        if "key_match" in label:
            data["key_match"] = label["key_match"]
    elif judgment.kind == JudgmentKind.ENTAILMENT:
        data["nugget_num"] = item.nugget_num
        data["entailed"] = label.get("entailed")
    else:
        data["correct"] = label.get("correct")
        data["relevant"] = label.get("relevant", [])
        data["nugget_reasons"] = judgment.nugget_reasons
    data.update({
        "reason": judgment.reason, "edited": judgment.edited,
        "needs_review": judgment.label is None,
        "confidence": judgment.confidence,
        "calibrated_confidence": judgment.calibrated_confidence,
        "doubtful": item.doubtful, "steps": judgment.steps,
        "judge": {"model": judgment.judge_model, "prompt_version": judgment.prompt_version},
        "input": judgment.input,
    })
    return data


# --- for the OpenAPI schema only: what the judgment views answer -----------------------
class JudgmentStepSerializer(serializers.Serializer[dict[str, Any]]):
    step = serializers.CharField(help_text="entailment, gold, nuggets or relevance")
    decided_by = serializers.CharField(
        help_text='"llm", or the rule that decided: "rule:gold-match", "rule:number-mismatch"')
    verdict = serializers.BooleanField(allow_null=True, help_text="null: the reply never parsed")
    confidence = serializers.FloatField(
        allow_null=True, help_text="the judge's probability for its verdict (1.0 for a rule)")
    calibrated = serializers.FloatField(
        required=False, allow_null=True,
        help_text="the confidence through the judge's calibration for this step's wording: "
                  "the share of such verdicts people agreed with (null: none fitted)")
    nugget = serializers.IntegerField(required=False, help_text="relevance steps: NuggetNum")
    prompt_version = serializers.CharField(required=False, help_text="llm steps")
    decision = serializers.CharField(
        required=False, help_text='llm steps: the wording and threshold that decided, '
                                  'e.g. "relevance-v2@0.85"')
    matched = serializers.CharField(required=False, allow_blank=True,
                                    help_text="rule steps: the gold answer that matched")
    explained = serializers.BooleanField(required=False,
                                         help_text="true where a reason was written")


class JudgeNameSerializer(serializers.Serializer[dict[str, Any]]):
    model = serializers.CharField()
    prompt_version = serializers.CharField()


class JudgmentItemSerializer(serializers.Serializer[dict[str, Any]]):
    """One use of a judgment (a nugget record or an answer of a run)."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=JudgmentKind.choices)
    run = serializers.CharField(
        allow_null=True, help_text="rubric: null (a grade is shared by every run that "
                                   "retrieved the passage), or the run asked for with ?run=")
    qid = serializers.CharField()
    nugget_num = serializers.IntegerField(required=False, help_text="entailment only")
    docid = serializers.CharField(required=False, help_text="rubric only: the passage")
    item_id = serializers.CharField(required=False, help_text="rubric only: the test-bank item")
    grade = serializers.IntegerField(
        required=False, min_value=0, max_value=5,
        help_text=f"rubric only: the self-rated grade that counts ({UNPARSED_GRADE} where "
                  "the reply never parsed)")
    answer = serializers.CharField(
        required=False, allow_blank=True,
        help_text="rubric only: the extracted answer (questions) or mention (nuggets)")
    key_match = serializers.BooleanField(
        required=False, allow_null=True,
        help_text="rubric only, with answer_check key or llm: the answer matches the key")
    entailed = serializers.BooleanField(required=False, allow_null=True,
                                        help_text="entailment only; null: needs review")
    correct = serializers.BooleanField(required=False, allow_null=True,
                                       help_text="answer only; null: needs review")
    relevant = serializers.ListField(child=serializers.IntegerField(), required=False,
                                     help_text="answer only: the relevant NuggetNums")
    nugget_reasons = serializers.DictField(child=serializers.CharField(), required=False,
                                           help_text="answer only: NuggetNum -> reason")
    reason = serializers.CharField(
        allow_blank=True, help_text="written only where the judge doubted (or an organiser)")
    edited = serializers.BooleanField(help_text="an organiser edited or confirmed the label")
    needs_review = serializers.BooleanField(help_text="no label: the reply never parsed")
    confidence = serializers.FloatField(
        allow_null=True, help_text="the judge's probability for its label; null: unmeasured")
    calibrated_confidence = serializers.FloatField(
        allow_null=True, help_text="the confidence through the judge's calibration: the share "
                                   "of such labels people agreed with; null: none fitted")
    doubtful = serializers.BooleanField(
        help_text="the calibrated confidence (else the raw one) under the campaign's review "
                  "threshold (review_below)")
    steps = JudgmentStepSerializer(many=True)
    judge = JudgeNameSerializer()
    input = serializers.JSONField(help_text="what the judge saw")


class JudgmentPageSerializer(serializers.Serializer[dict[str, Any]]):
    """A page of the judgments list (DRF's page-number pagination)."""

    count = serializers.IntegerField(help_text="items on every page together")
    next = serializers.URLField(allow_null=True, help_text="the next page; null on the last")
    previous = serializers.URLField(allow_null=True)
    results = JudgmentItemSerializer(many=True)


class JudgmentHistorySerializer(serializers.Serializer[dict[str, Any]]):
    edited_by = serializers.CharField(allow_null=True)
    edited_at = serializers.DateTimeField()
    note = serializers.CharField()
    previous_label = serializers.JSONField(allow_null=True)
    previous_reason = serializers.CharField(allow_blank=True)
    new_label = serializers.JSONField()
    new_reason = serializers.CharField(allow_blank=True)


class JudgmentDetailSerializer(serializers.Serializer[dict[str, Any]]):
    """A judgment with its provenance and audit trail."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=JudgmentKind.choices)
    status = serializers.CharField()
    # DRF pops declared fields off the class, so this does not shadow Field.label.
    label = serializers.JSONField(  # type: ignore[assignment]
        allow_null=True, help_text="the label that counts")
    llm_label = serializers.JSONField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    llm_reason = serializers.CharField(allow_blank=True)
    nugget_reasons = serializers.DictField(child=serializers.CharField())
    edited = serializers.BooleanField()
    confidence = serializers.FloatField(allow_null=True)
    doubtful = serializers.BooleanField()
    steps = JudgmentStepSerializer(many=True)
    input = serializers.JSONField()
    judge = serializers.JSONField(help_text="model, prompt_version, decoding")
    provenance = serializers.JSONField(
        help_text="input_hash, raw_output, prompt_tokens, completion_tokens, "
                  "latency_seconds, attempts, judged_at")
    history = JudgmentHistorySerializer(many=True)


class JudgmentEditSerializer(serializers.Serializer[dict[str, Any]]):
    entailed = serializers.BooleanField(required=False)
    grade = serializers.IntegerField(required=False, min_value=min(RUBRIC_GRADES),
                                     max_value=max(RUBRIC_GRADES),
                                     help_text="rubric: the grade, 0..5")
    answer = CleanTextField(required=False, allow_blank=True, cap=ANSWER,
                            help_text="rubric: the extracted answer (optional)")
    correct = serializers.BooleanField(required=False)
    relevant = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False)
    reason = CleanTextField(required=False, allow_blank=True, default="", cap=NOTE)
    note = CleanTextField(cap=NOTE, help_text="why the label changes (kept in the audit trail)")


class TestBankGenerateSerializer(serializers.Serializer[dict[str, Any]]):
    """What to draft: `n` items of `target` per query that has none."""

    __test__ = False  # a serializer, not a pytest class

    target = serializers.ChoiceField(choices=[t.value for t in PromptTarget],
                                     default=DRAFT_TARGET.value)
    n = serializers.IntegerField(min_value=1, max_value=MAX_GENERATED_ITEMS, default=10)


def run_progress_json(progress: RunProgress) -> dict[str, Any]:
    return {
        "run": progress.run.name, "id": progress.run.pk, "status": progress.run.status,
        "entailments": {"done": progress.nuggets_judged, "total": progress.nuggets},
        "answers": {"done": progress.answers_judged, "total": progress.answers},
        # A ranking or response run's (passage, current item) pairs (0 for AC runs).
        "passages": progress.passages,
        "pairs": {"done": progress.pairs_graded, "total": progress.pairs},
        "done": progress.done, "total": progress.total,
        "needs_review": progress.needs_review,
        "failure_reason": progress.run.failure_reason,
    }
