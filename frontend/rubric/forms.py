"""Forms of the RUBRIC organiser pages: the test bank's edits and the verification
pages' filters. Field errors name the field, so a bad value is a form error beside it
(status 400), never a 500; the services' own refusals are added the same way."""

from __future__ import annotations

from typing import Any

from django import forms

from campaign.models import BankItemStatus, Campaign, Question, TestBankItem
from campaign.testbank import ItemChange, TestBankRefused
from campaign.text_fields import ANSWER, NOTE, CleanTextFormField
from campaign.vocabulary import PromptTarget
from grading.llm.schemas import RUBRIC_GRADES

NOT_AN_ITEM = "'{item}' is not a current item of query {qid}"
NO_QUERIES = "no query has test-bank items yet"
ANSWERS_HELP = "One answer per line (questions only; an EXAM++ answer key). Optional."
NOTE_LABEL = "Note for the audit trail (why the test bank changes)"

TARGET_CHOICES = [(PromptTarget.NUGGETS.value, "nugget"),
                  (PromptTarget.QUESTIONS.value, "exam question")]
GRADE_CHOICES = [(grade, str(grade)) for grade in RUBRIC_GRADES]


def add_refusal(form: forms.Form, refused: TestBankRefused) -> None:
    """A service's refusal, beside the field it names (else above the form)."""
    form.add_error(refused.field if refused.field in form.fields else None, str(refused))


def _answers(text: str) -> list[str]:
    """The answers typed one per line (blank lines are not answers)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


class TestBankFilterForm(forms.Form):
    __test__ = False

    qid = forms.ChoiceField(label="Query", required=False)
    status = forms.ChoiceField(label="Status", required=False,
                               choices=[("", "Any"), *BankItemStatus.choices])

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        qids = Question.objects.filter(campaign=campaign).values_list("qid", flat=True)
        self.fields["qid"].choices = [("", "Any"), *((q, q) for q in qids)]  # type: ignore[attr-defined]


class TestBankAddForm(forms.Form):
    __test__ = False

    qid = forms.ChoiceField(label="Query")
    target = forms.ChoiceField(label="Kind of item", choices=TARGET_CHOICES)
    text = CleanTextFormField(label="Text", cap=ANSWER, strip=False,
                              widget=forms.Textarea(attrs={"rows": 2}))
    answers = CleanTextFormField(label="Answers", required=False, help_text=ANSWERS_HELP,
                                 what="answers", widget=forms.Textarea(attrs={"rows": 2}))
    note = CleanTextFormField(label="Note (optional)", required=False, cap=NOTE, strip=False,
                              what="note")

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["qid"].choices = [  # type: ignore[attr-defined]
            (q.qid, f"{q.qid}: {q.text[:80]}") for q in Question.objects.filter(campaign=campaign)]

    def clean_answers(self) -> list[str]:
        return _answers(self.cleaned_data["answers"])


class TestBankEditForm(forms.Form):
    """Edit an item: only what differs from the item is sent to `testbank_edit`."""

    __test__ = False

    text = CleanTextFormField(label="Text", cap=ANSWER, strip=False,
                              widget=forms.Textarea(attrs={"rows": 3}))
    answers = CleanTextFormField(label="Answers", required=False, help_text=ANSWERS_HELP,
                                 what="answers", widget=forms.Textarea(attrs={"rows": 2}))
    status = forms.ChoiceField(label="Status", choices=[
        (BankItemStatus.DRAFT.value, BankItemStatus.DRAFT.label),
        (BankItemStatus.ACTIVE.value, BankItemStatus.ACTIVE.label)])
    note = CleanTextFormField(label=NOTE_LABEL, cap=NOTE, strip=False, what="note",
                              widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args: Any, item: TestBankItem, **kwargs: Any) -> None:
        kwargs["initial"] = {"text": item.text, "answers": "\n".join(item.answers),
                             "status": item.status}
        super().__init__(*args, **kwargs)
        self.item = item

    def clean_answers(self) -> list[str]:
        return _answers(self.cleaned_data["answers"])

    def change(self) -> ItemChange:
        data = self.cleaned_data
        answers = data["answers"]
        return ItemChange(
            text=None if data["text"].strip() == self.item.text else data["text"],
            answers=None if answers == list(self.item.answers) else answers,
            status=None if data["status"] == self.item.status else data["status"])


class TestBankRetireForm(forms.Form):
    __test__ = False

    note = CleanTextFormField(label="Why it goes (kept in the item's history)",
                              cap=NOTE, strip=False, what="note",
                              widget=forms.Textarea(attrs={"rows": 2}))


class VerificationFilterForm(forms.Form):
    """A query (by default the first with items), optionally one of its items and one
    grade. `items` and `qid_or_default` are read after `is_valid()`."""

    qid = forms.ChoiceField(label="Query", required=False)
    item = CleanTextFormField(label="Item (its id)", required=False, max_length=200,
                              line_breaks=False, what="item id")
    grade = forms.TypedChoiceField(label="Grade", required=False, coerce=int,
                                   empty_value=None,
                                   choices=[("", "Any"), *GRADE_CHOICES])

    def __init__(self, *args: Any, queries: list[Question],
                 items_of: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queries = queries
        self.items_of = items_of  # qid -> the query's current items
        self.fields["qid"].choices = [(q.qid, f"{q.qid}: {q.text[:60]}") for q in queries]  # type: ignore[attr-defined]
        self.items: list[TestBankItem] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.queries:
            raise forms.ValidationError(NO_QUERIES)
        qid = data.get("qid") or self.queries[0].qid
        data["qid"] = qid
        items = self.items_of(qid)
        wanted = data.get("item")
        if wanted:
            items = [item for item in items if item.item_id == wanted]
            if not items:
                self.add_error("item", NOT_AN_ITEM.format(item=wanted, qid=qid))
        self.items = items
        return data


class GradeEditForm(forms.Form):
    """Post-edit a rubric grade with a note (the extracted answer stays as it is)."""

    grade = forms.TypedChoiceField(label="Grade (0..5)", choices=GRADE_CHOICES, coerce=int)
    note = CleanTextFormField(label="Note for the audit trail (why the grade changes)",
                              cap=NOTE, what="note")


class GapsFilterForm(forms.Form):
    """The manual-qrels lists' filter: one query of the manual qrels, or all."""

    qid = forms.ChoiceField(label="Query", required=False)

    def __init__(self, *args: Any, qids: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["qid"].choices = [("", "Any"), *((q, q) for q in qids)]  # type: ignore[attr-defined]
