"""Reads for grading: marked runs, grading progress, the runs a judgment affects and
the RUBRIC grades that count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import (
    Count,
    Q,
    QuerySet,
)

from campaign.kinds import kind_of, kinds
from campaign.models import Campaign, Role
from campaign.selectors import campaign_membership, campaign_role
from grading.llm.rubric import UNPARSED_GRADE
from grading.models import (
    AnswerEvaluation,
    JudgeSlot,
    Judgment,
    NuggetEntailment,
)
from grading.rubric.uses import fresh_grade_links, rubric_pair_counts
from submissions.formats.ac_run import NuggetRecord as NuggetLine
from submissions.formats.common import PassageKey
from submissions.formats.marked_ac_run import MarkedAnswerRecord, MarkedNugget, block_marks
from submissions.models import AnswerRecord, NuggetRecord, Run


@dataclass(frozen=True)
class JudgedAnswerBlock:
    """One question of a graded AC run: the marked block and the answer verdict; `correct` is None
    (and the block incomplete) while a judgment needs review."""

    marked: MarkedAnswerRecord
    correct: bool | None
    complete: bool


def marked_run(*, run: Run, slot: str = JudgeSlot.OFFICIAL) -> list[JudgedAnswerBlock]:
    """The marked AC run (docs/formats.md) with each answer's verdict: each block marked B, R or N
    per nugget by `block_marks`, edited labels winning."""
    entailed: dict[int, bool | None] = {}
    for link in NuggetEntailment.objects.filter(nugget__run=run, slot=slot).select_related(
        "judgment"
    ):
        label = link.judgment.label
        entailed[link.nugget_id] = None if label is None else bool(label["entailed"])
    verdicts: dict[int, dict[str, object] | None] = {
        link.answer_id: link.judgment.label
        for link in AnswerEvaluation.objects.filter(answer__run=run, slot=slot)
        .select_related("judgment")
    }
    blocks = []
    nuggets_of: dict[int, list[NuggetRecord]] = {}
    for nugget in NuggetRecord.objects.filter(run=run).order_by("nugget_num"):
        nuggets_of.setdefault(nugget.answer_id, []).append(nugget)
    for answer in AnswerRecord.objects.filter(run=run).order_by("qid"):
        nuggets = nuggets_of.get(answer.pk, [])
        block = block_marks(nugget_nums=[nugget.nugget_num for nugget in nuggets],
                            entailed={nugget.nugget_num: entailed.get(nugget.pk)
                                      for nugget in nuggets},
                            verdict=verdicts.get(answer.pk))
        marked = tuple(
            MarkedNugget(NuggetLine(answer.qid, nugget.nugget_num,
                                    PassageKey(nugget.pr_run_name, nugget.passage_rank),
                                    nugget.text), mark)
            for nugget, mark in zip(nuggets, block.marks, strict=True))
        blocks.append(JudgedAnswerBlock(
            marked=MarkedAnswerRecord(answer.qid, answer.answer, answer.confidence, marked),
            correct=block.correct, complete=block.complete,
        ))
    return blocks


def marked_run_for_user(
    *, run_id: int, user: AbstractBaseUser | AnonymousUser
) -> Run | None:
    """The AC run with an official judgment whose marked version `user` may download, or None for
    "no such run" and "not yours to see" alike: the caller answers one 404 (docs/access.md)."""
    run = (Run.objects.filter(pk=run_id, track__kind__in=kinds(answers=True))
           .select_related("track__campaign").first())
    if run is None:
        return None
    judged = (NuggetEntailment.objects.filter(nugget__run=run, slot=JudgeSlot.OFFICIAL).exists()
              or AnswerEvaluation.objects.filter(answer__run=run,
                                                 slot=JudgeSlot.OFFICIAL).exists())
    if not judged:
        return None
    campaign = run.track.campaign
    if campaign_role(campaign=campaign, user=user) == Role.ORGANISER:
        return run
    membership = campaign_membership(campaign=campaign, user=user)
    if membership is None or membership.team_id != run.team_id:
        return None
    # Scoring's snapshots, reached through the track: scoring reads grading, not back.
    published = run.track.evaluations.filter(published_at__isnull=False).exists()
    return run if published else None


@dataclass(frozen=True, kw_only=True)
class RunProgress:
    """How far grading a run has got: an AC run counts its nugget and answer judgments;
    a ranking or response run its (passage, current item) pairs graded, over the
    passages grading rates of it."""

    run: Run
    nuggets: int = 0
    nuggets_judged: int = 0
    answers: int = 0
    answers_judged: int = 0
    passages: int = 0
    pairs: int = 0
    pairs_graded: int = 0
    needs_review: int = 0

    @property
    def done(self) -> int:
        return self.nuggets_judged + self.answers_judged + self.pairs_graded

    @property
    def total(self) -> int:
        return self.nuggets + self.answers + self.pairs


def ac_runs(*, campaign: Campaign) -> QuerySet[Run]:
    """The current, accepted AC runs of a campaign: what the R2C2 pipeline works on."""
    return (Run.objects.filter(track__campaign=campaign).of_kinds(answers=True).current()
            .accepted().select_related("team", "track"))


def graded_runs(*, campaign: Campaign) -> QuerySet[Run]:
    """The current, accepted runs of a campaign that grading works on: AC, ranking and
    response runs."""
    return (Run.objects.filter(track__campaign=campaign).of_kinds(graded=True)
            .current().accepted().select_related("team", "track"))


def grading_progress(*, campaign: Campaign) -> list[RunProgress]:
    """Judgments done/total per graded run (AC, ranking, response), and how many wait for review,
    in a constant number of queries however many runs (one per table, grouped by run)."""
    runs = list(graded_runs(campaign=campaign).order_by("name"))
    pairs = rubric_pair_counts(campaign=campaign,
                               runs=[run for run in runs if run.track.is_rubric])
    run_ids = [run.pk for run in runs if kind_of(run.track.kind).answers]
    nuggets = _count_by_run(NuggetRecord.objects.filter(run__in=run_ids), "run")
    answers = _count_by_run(AnswerRecord.objects.filter(run__in=run_ids), "run")
    unlabelled = Q(judgment__llm_label__isnull=True, judgment__edited_label__isnull=True)
    nugget_links = NuggetEntailment.objects.filter(slot=JudgeSlot.OFFICIAL,
                                                   nugget__run__in=run_ids)
    answer_links = AnswerEvaluation.objects.filter(slot=JudgeSlot.OFFICIAL,
                                                   answer__run__in=run_ids)
    nuggets_judged = _count_by_run(nugget_links, "nugget__run")
    answers_judged = _count_by_run(answer_links, "answer__run")
    review = Counter(_count_by_run(nugget_links.filter(unlabelled), "nugget__run"))
    review.update(_count_by_run(answer_links.filter(unlabelled), "answer__run"))
    return [
        RunProgress(run=run, passages=pairs[run.pk].passages, pairs=pairs[run.pk].pairs,
                    pairs_graded=pairs[run.pk].graded, needs_review=pairs[run.pk].needs_review)
        if run.pk in pairs else
        RunProgress(run=run, nuggets=nuggets.get(run.pk, 0),
                    nuggets_judged=nuggets_judged.get(run.pk, 0),
                    answers=answers.get(run.pk, 0), answers_judged=answers_judged.get(run.pk, 0),
                    needs_review=review[run.pk])
        for run in runs
    ]


def _count_by_run(rows: QuerySet[Any], run: str) -> dict[int, int]:
    """How many of `rows` belong to each run (`run` is the path to the run's id)."""
    return dict(rows.order_by().values_list(run).annotate(n=Count("pk")))


def runs_using(*, judgment: Judgment) -> list[Run]:
    """Every run with a nugget or answer decided by this judgment (what an edit affects)."""
    run_ids = set(
        NuggetEntailment.objects.filter(judgment=judgment).values_list("nugget__run_id", flat=True)
    ) | set(
        AnswerEvaluation.objects.filter(judgment=judgment).values_list("answer__run_id", flat=True)
    )
    return list(Run.objects.filter(pk__in=run_ids).select_related("track__campaign"))


def counted_grade(label: Mapping[str, Any] | None) -> int:
    """The grade a rubric label counts for: its `grade`, or UNPARSED_GRADE where there
    is no label (the judge's reply never parsed and no organiser has given one)."""
    return UNPARSED_GRADE if label is None else int(label["grade"])


def counted_grade_is(grade: int, *, via: str = "") -> Q:
    """`counted_grade` = `grade`, as a query condition on judgments reached through `via`."""
    edited = Q(**{f"{via}edited_label__isnull": False, f"{via}edited_label__grade": grade})
    judged = Q(**{f"{via}edited_label__isnull": True, f"{via}llm_label__grade": grade})
    if grade != UNPARSED_GRADE:
        return edited | judged
    return edited | judged | Q(**{f"{via}edited_label__isnull": True,
                                  f"{via}llm_label__isnull": True})


def rubric_grades(
    *, campaign: Campaign, qids: Iterable[str] | None = None
) -> dict[str, dict[str, dict[str, int]]]:
    """grades[qid][docid][item_id]: each passage's counted grade (0..5) on each current item of its
    query, an organiser's edit winning, in one query; stale grades and retired items left out."""
    links = fresh_grade_links(campaign=campaign)
    if qids is not None:
        links = links.filter(qid__in=list(qids))
    grades: dict[str, dict[str, dict[str, int]]] = {}
    rows = links.values_list("qid", "docid", "item__item_id", "judgment__llm_label",
                             "judgment__edited_label")
    for qid, docid, item_id, llm_label, edited_label in rows.iterator():
        label = edited_label if edited_label is not None else llm_label
        grades.setdefault(qid, {}).setdefault(docid, {})[item_id] = counted_grade(label)
    return grades
