from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms

from campaign.kinds import KINDS, Kind, kind_of
from campaign.selectors import TrackWindow
from campaign.text_fields import NOTE, CleanTextFormField
from grading.models import Judgment

LABEL_HELP = "a label is letters, digits and '_', at most 32"


class TrackField(forms.ChoiceField):
    """The tracks offered; one not offered because it is closed (or not open yet) is
    refused with the server's words for it, not as an unknown choice."""

    refusals: Mapping[str, str] = {}

    def validate(self, value: Any) -> None:
        if value in self.refusals:
            raise forms.ValidationError(self.refusals[value], code="closed")
        super().validate(value)


class RunUploadForm(forms.Form):
    track = TrackField(label="Track")
    name = CleanTextFormField(
        label="Run name", max_length=100, line_breaks=False, what="run name",
        help_text="[Team]-PG-[n] or [Team]-PO-[n] for PR runs, [Team]-AC-[n] for AC runs",
    )
    file = forms.FileField(label="Run file", help_text="UTF-8 text in the official format")
    description = CleanTextFormField(
        label="Description (optional)", required=False, cap=NOTE, what="description",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="How the run was made: retriever, model, prompts",
    )

    def __init__(self, *args: Any, windows: Sequence[TrackWindow], zone: str, organiser: bool,
                 **kwargs: Any) -> None:
        """Offers the open tracks of `windows`; an organiser, who may enter runs at any
        time, every track."""
        super().__init__(*args, **kwargs)
        self.offered = [w for w in windows if organiser or w.open]
        field = self.fields["track"]
        assert isinstance(field, TrackField)
        field.choices = [(w.track.slug, _track_choice(w, zone)) for w in self.offered]
        field.refusals = {w.track.slug: w.refusal for w in windows
                          if w not in self.offered and w.refusal is not None}
        offered = {w.track.kind for w in self.offered}
        if any(kind_of(kind).rubric for kind in offered):
            self.fields["name"].help_text = "; ".join(
                run_name_help(kind) for kind in KINDS.values() if kind.value in offered
            ) + f" ({LABEL_HELP})"


def run_name_help(kind: Kind) -> str:
    """How the upload form explains a kind's run names: "[Team]-[label] for ranking runs (TREC
    format)"."""
    return (f"{kind.run_names} for {kind.noun} runs"
            + (f" ({kind.file_format})" if kind.file_format else ""))


def _track_choice(window: TrackWindow, zone: str) -> str:
    track = window.track
    closed = "" if window.open else ", not open to participants now"
    return f"{track.slug}: {track.get_kind_display()}, due {window.due} ({zone}){closed}"


YES_NO = [("true", "Yes"), ("false", "No")]


class JudgmentEditForm(forms.Form):
    """Change a judgment's label with a note, in one action (docs/judging.md)."""

    entailed = forms.TypedChoiceField(label="Does the passage entail the nugget?",
                                      choices=YES_NO, coerce=lambda v: v == "true",
                                      widget=forms.RadioSelect, required=False)
    correct = forms.TypedChoiceField(label="Is the answer correct?", choices=YES_NO,
                                     coerce=lambda v: v == "true", widget=forms.RadioSelect,
                                     required=False)
    relevant = forms.TypedMultipleChoiceField(
        label="Relevant nuggets (helped to deduce a correct answer)", required=False,
        coerce=int, widget=forms.CheckboxSelectMultiple)
    reason = CleanTextFormField(label="Reason (shown with the label)", required=False,
                                cap=NOTE, what="reason", widget=forms.Textarea(attrs={"rows": 2}))
    note = CleanTextFormField(label="Note for the audit trail (why the label changes)",
                              cap=NOTE, what="note", widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args: Any, judgment: Judgment, **kwargs: Any) -> None:
        label = judgment.label or {}
        initial: dict[str, Any] = {"reason": judgment.reason}
        del_fields: tuple[str, ...]
        if judgment.kind == "entailment":
            initial["entailed"] = "true" if label.get("entailed") else "false"
            del_fields = ("correct", "relevant")
        else:
            initial["correct"] = "true" if label.get("correct") else "false"
            initial["relevant"] = label.get("relevant", [])
            del_fields = ("entailed",)
        kwargs["initial"] = initial
        super().__init__(*args, **kwargs)
        self.judgment = judgment
        for name in del_fields:
            del self.fields[name]
        if "relevant" in self.fields:
            self.fields["relevant"].choices = [  # type: ignore[attr-defined]
                (n["num"], f"[{n['num']}] {n['text']}")
                for n in judgment.input.get("nuggets", [])]
        required = "entailed" if judgment.kind == "entailment" else "correct"
        self.fields[required].required = True

    def changes(self) -> dict[str, Any]:
        data = self.cleaned_data
        if self.judgment.kind == "entailment":
            return {"entailed": data["entailed"]}
        return {"correct": data["correct"], "relevant": list(data.get("relevant") or [])}
