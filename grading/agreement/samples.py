"""Drawing blind samples and storing people's labels of them."""

from __future__ import annotations

import random
import secrets
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from campaign.models import Campaign
from grading.models import BlindItem, BlindSample, JudgmentKind
from grading.review.edits import EditRefused, judgment_edit
from grading.review.queue import official_judgments

# A sample larger than this is more labelling than a guarantee needs (docs/agreement.md).
MAX_SAMPLE_SIZE = 2000
BAD_KIND = "kind must be entailment, answer or rubric; found {found!r}"
BAD_SIZE = "size must be a whole number from 1 to {most}; found {found!r}"
BAD_SEED = "seed must be a whole number from 0 to 2**63 - 1; found {found!r}"
NOTHING_TO_SAMPLE = ("no {kind} judgment of the current runs is left to sample (every one "
                     "is in a blind sample already, or none is graded yet)")
BLIND_NOTE = "Blind label (sample {sample}, item {position})"
# What a person gives per kind: a rubric label's extracted answer stays the judge's.
PERSON_FIELDS: dict[str, tuple[str, ...]] = {JudgmentKind.ENTAILMENT: ("entailed",),
                 JudgmentKind.ANSWER: ("correct", "relevant"),
                 JudgmentKind.RUBRIC: ("grade",)}


class SampleRefused(ValueError):
    """A draw that cannot be made; `field` names the request field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _checked_draw(kind: Any, size: Any, seed: Any) -> tuple[str, int, int]:
    if kind not in JudgmentKind.values:
        raise SampleRefused("kind", BAD_KIND.format(found=kind))
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_SAMPLE_SIZE:
        raise SampleRefused("size", BAD_SIZE.format(most=MAX_SAMPLE_SIZE, found=size))
    if seed is None:
        seed = secrets.randbelow(2**31)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SampleRefused("seed", BAD_SEED.format(found=seed))
    return kind, size, seed


@transaction.atomic
def blind_sample_draw(*, campaign: Campaign, kind: Any, size: Any, seed: Any = None,
                      user: AbstractBaseUser | None) -> BlindSample:
    """A seeded uniform sample of the kind's official judgments not sampled before (so
    that samples drawn one after another add up to one uniform sample)."""
    kind, size, seed = _checked_draw(kind, size, seed)
    population = list(
        official_judgments(campaign=campaign).filter(kind=kind)
        .exclude(blind_items__sample__campaign=campaign)
        .order_by("pk").values_list("pk", flat=True))
    if not population:
        raise SampleRefused("kind", NOTHING_TO_SAMPLE.format(kind=kind))
    chosen = random.Random(seed).sample(population, min(size, len(population)))
    sample = BlindSample.objects.create(campaign=campaign, kind=kind, seed=seed,
                                        population=len(population),
                                        created_by_id=getattr(user, "pk", None))
    BlindItem.objects.bulk_create(
        BlindItem(sample=sample, position=place, judgment_id=judgment_id)
        for place, judgment_id in enumerate(chosen, start=1))
    return sample


@transaction.atomic
def blind_item_label(*, item: BlindItem, user: AbstractBaseUser, changes: dict[str, Any],
                     note: str = "") -> BlindItem:
    """Store a person's label of a sampled judgment, and let it settle the judgment as
    an edit does (the audit trail names the sample); a second label replaces the first."""
    item = BlindItem.objects.select_for_update().select_related("judgment").get(pk=item.pk)
    if not isinstance(note, str):
        raise EditRefused("note", f"note must be text; found {note!r}")
    edit_note = BLIND_NOTE.format(sample=item.sample_id, position=item.position)
    judgment = judgment_edit(judgment=item.judgment, user=user, changes=changes,
                             reason=note, note=f"{edit_note}: {note}" if note else edit_note)
    label = judgment.edited_label or {}
    item.label = {name: label[name] for name in PERSON_FIELDS[judgment.kind] if name in label}
    item.note = note
    item.labelled_by_id = user.pk
    item.labelled_at = timezone.now()
    item.save(update_fields=["label", "note", "labelled_by", "labelled_at"])
    return item
