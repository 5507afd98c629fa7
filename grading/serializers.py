from __future__ import annotations

from typing import Any

from rest_framework import serializers

from grading.selectors import JudgmentItem, RunProgress


def judgment_item_json(item: JudgmentItem) -> dict[str, Any]:
    """DESIGN.md section 9: id, kind, run, qid, nugget_num, label fields, reason, edited, judge."""
    judgment = item.judgment
    label = judgment.label or {}
    data: dict[str, Any] = {
        "id": judgment.pk, "kind": judgment.kind, "run": item.run, "qid": item.qid,
    }
    if judgment.kind == "entailment":
        data["nugget_num"] = item.nugget_num
        data["entailed"] = label.get("entailed")
    else:
        data["correct"] = label.get("correct")
        data["relevant"] = label.get("relevant", [])
        data["nugget_reasons"] = judgment.nugget_reasons
    data.update({
        "reason": judgment.reason, "edited": judgment.edited,
        "needs_review": judgment.label is None,
        "judge": {"model": judgment.judge_model, "prompt_version": judgment.prompt_version},
        "input": judgment.input,
    })
    return data


class JudgmentEditSerializer(serializers.Serializer[dict[str, Any]]):
    entailed = serializers.BooleanField(required=False)
    correct = serializers.BooleanField(required=False)
    relevant = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    note = serializers.CharField(help_text="why the label changes (kept in the audit trail)")


def run_progress_json(progress: RunProgress) -> dict[str, Any]:
    return {
        "run": progress.run.name, "id": progress.run.pk, "status": progress.run.status,
        "entailments": {"done": progress.nuggets_judged, "total": progress.nuggets},
        "answers": {"done": progress.answers_judged, "total": progress.answers},
        "done": progress.done, "total": progress.total,
        "needs_review": progress.needs_review,
    }
