"""Reads for RUBRIC grades: which (passage, item) grades count now and which runs use them, as
query conditions for many runs at once; a module of its own since grading.review.queue and
grading.selectors both need it, and the second imports the first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from campaign.models import BankItemStatus, Campaign, TestBankItem
from grading.models import PassageItemGrade
from submissions.models import RankedPassage, Run


def fresh_grade_links(*, campaign: Campaign) -> QuerySet[PassageItemGrade]:
    """The campaign's (passage, item) grades that grading uses now: items not retired,
    and graded on the item's current text (an edit makes the earlier grade stale until
    the pair is graded again)."""
    return (PassageItemGrade.objects.filter(campaign=campaign,
                                            item_text_hash=F("item__text_hash"))
            .exclude(item__status=BankItemStatus.RETIRED))


def graded_passages(*, runs: QuerySet[Run]) -> QuerySet[RankedPassage]:
    """The passages of `runs` that grading rates: a ranking run's top `track.depth` of
    each query, every segment of a response run (its Rubric-Cover counts them all)."""
    return RankedPassage.objects.filter(run__in=runs).graded()


def grade_links_used(*, campaign: Campaign, runs: QuerySet[Run]) -> QuerySet[PassageItemGrade]:
    """The fresh grades of the passages that grading rates of `runs`."""
    retrieved = graded_passages(runs=runs).filter(qid=OuterRef("qid"), docid=OuterRef("docid"))
    return fresh_grade_links(campaign=campaign).filter(Exists(retrieved))


@dataclass
class PairCounts:
    """Grading progress of a ranking or response run: its rated passages, the (passage,
    current item) pairs they make, how many have a fresh grade, how many of those the
    judge left without a label (needs review)."""

    passages: int = 0
    pairs: int = 0
    graded: int = 0
    needs_review: int = 0


def rubric_pair_counts(*, campaign: Campaign, runs: Sequence[Run]) -> dict[int, PairCounts]:
    """PairCounts of each of `runs` (ranking or response) by run id, in three queries however many
    runs: passages read one row each, items and fresh grades counted in the database."""
    if not runs:
        return {}
    items_of = dict(
        TestBankItem.objects.filter(campaign=campaign).current()
        .order_by().values_list("question__qid").annotate(n=Count("pk")))
    unlabelled = Q(judgment__llm_label__isnull=True, judgment__edited_label__isnull=True)
    rated = Run.objects.filter(pk__in=[run.pk for run in runs])
    grades_of = {
        (qid, docid): (graded, review)
        for qid, docid, graded, review in grade_links_used(campaign=campaign, runs=rated)
        .order_by().values_list("qid", "docid")
        .annotate(graded=Count("pk"), review=Count("pk", filter=unlabelled))
    }
    counts = {run.pk: PairCounts() for run in runs}
    rows = graded_passages(runs=rated).values_list("run_id", "qid", "docid")
    for run_id, qid, docid in rows.iterator():
        count = counts[run_id]
        graded, review = grades_of.get((qid, docid), (0, 0))
        count.passages += 1
        count.pairs += items_of.get(qid, 0)
        count.graded += graded
        count.needs_review += review
    return counts
