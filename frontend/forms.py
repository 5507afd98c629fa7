from __future__ import annotations

from typing import Any

from django import forms

from campaign.models import Campaign


class RunUploadForm(forms.Form):
    track = forms.ChoiceField(label="Track")
    name = forms.CharField(
        label="Run name", max_length=100,
        help_text="[Team]-PG-[n] or [Team]-PO-[n] for PR runs, [Team]-AC-[n] for AC runs",
    )
    file = forms.FileField(label="Run file", help_text="UTF-8 text in the official format")
    description = forms.CharField(
        label="Description (optional)", required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="How the run was made: retriever, model, prompts",
    )

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["track"].choices = [  # type: ignore[attr-defined]
            (track.slug, f"{track.slug} ({track.get_kind_display()})")
            for track in campaign.tracks.all()
        ]
