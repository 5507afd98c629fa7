"""Organisers' post-edits of a judgment, with their audit trail: an edit wins wherever its
input occurs, and the runs it affects are graded and scored again."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from grading.llm.schemas import RUBRIC_GRADES
from grading.models import (
    Judgment,
    JudgmentEdit,
    JudgmentKind,
    JudgmentStatus,
)
from grading.selectors import runs_using
from grading.work.dispatch import enqueue_scoring
from grading.work.rounds import enqueue_grading

# --- post-editing -----------------------------------------------------------------
NOTE_REQUIRED = "a note saying why the label changes is required"
WRONG_FIELDS = "this {kind} judgment takes {expected}; found {found}"
BAD_RELEVANT = "relevant must list NuggetNums shown to the judge ({shown}); found {found}"
RELEVANT_WITHOUT_CORRECT = "relevant nuggets are only possible when the answer is correct"


class EditRefused(ValueError):
    """A post-edit that does not fit the judgment; `field` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


BAD_GRADE = "grade must be an integer from 0 to 5; found {found!r}"
BAD_ANSWER = "answer must be a string; found {found!r}"


def _checked_grade(judgment: Judgment, changes: dict[str, Any]) -> dict[str, Any]:
    """A rubric edit: `grade` (0..5), and optionally the `answer` (else the one given); `key_match`
    stays the judge's, since it checked the answer, not the grade (docs/review.md)."""
    current = judgment.label or {}
    repeated = "key_match" in changes and changes["key_match"] == current.get("key_match")
    if repeated:
        changes = {k: v for k, v in changes.items() if k != "key_match"}
    if "grade" not in changes or not set(changes) <= {"grade", "answer"}:
        raise EditRefused("grade", WRONG_FIELDS.format(
            kind="rubric", expected='{"grade": 0..5, "answer": "..." (optional)}',
            found=changes))
    grade = changes["grade"]
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in RUBRIC_GRADES:
        raise EditRefused("grade", BAD_GRADE.format(found=grade))
    answer = changes.get("answer", current.get("answer", ""))
    if not isinstance(answer, str):
        raise EditRefused("answer", BAD_ANSWER.format(found=answer))
    label = {"grade": grade, "answer": answer}
    if "key_match" in current:
        label["key_match"] = current["key_match"]
    return label


def _checked_label(judgment: Judgment, changes: dict[str, Any]) -> dict[str, Any]:
    if judgment.kind == JudgmentKind.RUBRIC:
        return _checked_grade(judgment, changes)
    if judgment.kind == JudgmentKind.ENTAILMENT:
        if set(changes) != {"entailed"} or not isinstance(changes["entailed"], bool):
            raise EditRefused("entailed", WRONG_FIELDS.format(
                kind="entailment", expected='{"entailed": true|false}', found=changes))
        return {"entailed": changes["entailed"]}
    if "correct" not in changes or not isinstance(changes["correct"], bool) \
            or not set(changes) <= {"correct", "relevant"}:
        raise EditRefused("correct", WRONG_FIELDS.format(
            kind="answer", expected='{"correct": true|false, "relevant": [NuggetNum, ...]}',
            found=changes))
    relevant = changes.get("relevant", [])
    shown = sorted(n["num"] for n in judgment.input.get("nuggets", []))
    if not isinstance(relevant, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n in shown for n in relevant
    ):
        raise EditRefused("relevant", BAD_RELEVANT.format(shown=shown, found=relevant))
    if relevant and not changes["correct"]:
        raise EditRefused("relevant", RELEVANT_WITHOUT_CORRECT)
    return {"correct": changes["correct"], "relevant": sorted(set(relevant))}


@transaction.atomic
def judgment_edit(
    *, judgment: Judgment, user: AbstractBaseUser | None, changes: dict[str, Any],
    reason: str, note: str, second_judge: bool = False,
) -> Judgment:
    """Post-edit a judgment's label, with its audit trail: it wins wherever this input
    occurs, and the runs it affects are graded and scored again.
    `second_judge`: the second judge decided it under the agreement guarantee, no person."""
    if not note.strip():
        raise EditRefused("note", NOTE_REQUIRED)
    label = _checked_label(judgment, changes)
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    author = None if user is None else user.pk
    JudgmentEdit.objects.create(
        judgment=judgment, edited_by_id=author, note=note, previous_label=judgment.label,
        previous_reason=judgment.reason, new_label=label, new_reason=reason,
    )
    judgment.edited_label = label
    judgment.edited_reason = reason
    judgment.edited_by_id = author
    judgment.edited_at = timezone.now()
    judgment.status = JudgmentStatus.REVIEWED
    judgment.decided_by_second_judge = second_judge
    judgment.full_clean()
    judgment.save()
    _after_edit(judgment)
    return judgment


@transaction.atomic
def judgment_edit_withdraw(*, judgment: Judgment, note: str) -> Judgment:
    """Take back the second judge's decision of a judgment: the official judge's label
    counts again and the judgment needs a person, with the audit trail saying why."""
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    if not judgment.decided_by_second_judge:
        return judgment
    JudgmentEdit.objects.create(
        judgment=judgment, edited_by=None, note=note, previous_label=judgment.label,
        previous_reason=judgment.reason, new_label=judgment.llm_label or {},
        new_reason=judgment.llm_reason)
    judgment.edited_label = None
    judgment.edited_reason = ""
    judgment.edited_by = None
    judgment.edited_at = None
    judgment.decided_by_second_judge = False
    judgment.status = (JudgmentStatus.DONE if judgment.llm_label is not None
                       else JudgmentStatus.NEEDS_REVIEW)
    judgment.save()
    _after_edit(judgment)
    return judgment


def _after_edit(judgment: Judgment) -> None:
    if judgment.kind == JudgmentKind.RUBRIC:
        # A rubric grade is read where it is stored (no run holds a copy to re-grade):
        # scoring again is all an edit needs.
        enqueue_scoring(judgment.campaign_id)
    else:
        enqueue_grading([run.pk for run in runs_using(judgment=judgment)])


CONFIRM_NOTE = "Confirmed by an organiser: the judge's label stands."
NOTHING_TO_CONFIRM = ("this judgment has no label to confirm (the judge's reply never "
                      "parsed); edit it to give one")


@transaction.atomic
def judgment_confirm(*, judgment: Judgment, user: AbstractBaseUser) -> Judgment:
    """One click for "reviewed, the judge was right": an edit to the label it has now, with
    CONFIRM_NOTE; its runs are graded and scored again (docs/review.md, "Confirmations")."""
    # The label confirmed is the one stored now, not the one the caller last saw.
    judgment = Judgment.objects.select_for_update().get(pk=judgment.pk)
    label = judgment.label
    if label is None:
        raise EditRefused("label", NOTHING_TO_CONFIRM)
    return judgment_edit(judgment=judgment, user=user, changes=dict(label),
                         reason=judgment.reason, note=CONFIRM_NOTE)
