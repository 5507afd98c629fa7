"""Reads for RUBRIC tracks (ranking, response): what scoring, the Rubric-Qrels endpoint and
the workbench export take from the database, a track's pool read with its runs' rankings
in one pass. Why a track reads only its pool's grades: docs/results.md, "Snapshots"."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from campaign.kinds import kind_of
from campaign.models import CorpusPassage, Role, TestBankItem, Track
from campaign.selectors import campaign_role
from grading.rubric.uses import fresh_grade_links
from grading.selectors import counted_grade, rubric_grades
from scoring.leaderboard import PARAMS
from scoring.measures.catalogue import cover_k_of
from scoring.measures.rubric import rubric_label, rubric_qrels
from scoring.selectors import evaluation_visible
from scoring.workbench import GradedParagraph, ItemGrade, SystemRank
from submissions.models import RankedPassage, Run

# qid -> docid -> item id -> grade
Grades = dict[str, dict[str, dict[str, int]]]



@dataclass(frozen=True)
class RubricTrack:
    """A ranking or response track's graded runs, their rankings, its pool and grades."""

    track: Track
    runs: list[Run]  # current, accepted and graded (RunQuerySet.judged), by name
    rankings: dict[int, dict[str, list[str]]]  # run id -> qid -> docids in rank order
    pool: dict[str, set[str]]  # qid -> the docids grading rates for these runs
    items: dict[str, list[str]]  # qid -> ids of its test-bank items (retired ones not)
    grades: Grades  # the pool's grades on those items; ungraded pairs absent

    @property
    def value_k(self) -> int | None:
        """The k Rubric-Cover's value is computed at: the track's cover_k; None (every
        segment) for a response, whose key carries its cover_k all the same."""
        return cover_k_of(self.track.kind, self.track.cover_k)

    @property
    def qids(self) -> list[str]:
        """The queries Rubric-Cover is defined on: those with test-bank items."""
        return sorted(qid for qid, items in self.items.items() if items)

    def qrels(self) -> dict[str, dict[str, int]]:
        """Rubric-Qrels by the track's `label` and `min_grade`: every graded passage."""
        return rubric_qrels(self.grades, label=self.track.label,
                            min_grade=self.track.min_grade)

    def params(self) -> dict[str, Any]:
        """The track's settings its numbers and keys depend on, as a snapshot records them."""
        values = {"min_grade": self.track.min_grade, "label": self.track.label,
                  "cover_k": self.track.cover_k, "depth": self.track.depth}
        return {key: values[key] for key in PARAMS}


def rubric_runs(*, track: Track) -> list[Run]:
    """The current runs of the track that have been graded: what its leaderboard ranks."""
    return list(Run.objects.filter(track=track).current().accepted().judged().not_withdrawn()
                .select_related("team").order_by("name"))


def rubric_track(*, track: Track) -> RubricTrack:
    """Everything the track's leaderboard and Rubric-Qrels are computed from, read now."""
    runs = rubric_runs(track=track)
    rankings: dict[int, dict[str, list[str]]] = {run.pk: {} for run in runs}
    pool: dict[str, set[str]] = {}
    passages = RankedPassage.objects.filter(run__in=runs)
    rows = passages.order_by("run_id", "qid", "rank").values_list("run_id", "qid", "docid")
    for run_id, qid, docid in rows.iterator():
        rankings[run_id].setdefault(qid, []).append(docid)
    for qid, docid in passages.graded().values_list("qid", "docid").iterator():
        pool.setdefault(qid, set()).add(docid)
    items: dict[str, list[str]] = {}
    for qid, item_id in (TestBankItem.objects.filter(campaign_id=track.campaign_id)
                         .current()
                         .order_by("question__position", "created_at", "id")
                         .values_list("question__qid", "item_id")):
        items.setdefault(qid, []).append(item_id)
    grades: Grades = {}
    read = rubric_grades(campaign=track.campaign, qids=sorted(pool)) if pool else {}
    for qid, by_docid in read.items():
        bank = set(items.get(qid, ()))
        for docid, by_item in by_docid.items():
            # An item retired or added between the two reads above: the bank as read
            # is the one both the grades and the cover's denominator follow.
            kept = {item: grade for item, grade in by_item.items() if item in bank}
            if docid in pool.get(qid, ()) and kept:
                grades.setdefault(qid, {})[docid] = kept
    return RubricTrack(track=track, runs=runs, rankings=rankings, pool=pool, items=items,
                       grades=grades)


@dataclass(frozen=True)
class RubricJudges:
    """Who graded a track's pool: 'model (prompt versions)', how many of those
    judgments organisers edited, and how many pairs still wait for review (a reply
    that never parsed, counted as grade 1 until an organiser gives one)."""

    judge: str
    edited: int
    needs_review: int


def rubric_judges(*, data: RubricTrack) -> RubricJudges:
    """The judges behind the grades `data` holds (those of its pool on current items)."""
    links = (fresh_grade_links(campaign=data.track.campaign).filter(qid__in=sorted(data.pool))
             .values_list("qid", "docid", "item__item_id", "judgment_id",
                          "judgment__judge_model", "judgment__prompt_version",
                          "judgment__llm_label", "judgment__edited_label"))
    models, versions, edited, waiting = set(), set(), set(), 0
    for qid, docid, item_id, judgment_id, model, version, llm_label, edited_label in \
            links.iterator():
        if item_id not in data.grades.get(qid, {}).get(docid, {}):
            continue
        models.add(model)
        versions.add(version)
        if edited_label is not None:
            edited.add(judgment_id)
        # No label at all: the reply never parsed and no organiser has given a grade.
        waiting += llm_label is None and edited_label is None
    judge = f"{', '.join(sorted(models))} ({', '.join(sorted(versions))})" if models else ""
    return RubricJudges(judge=judge, edited=len(edited), needs_review=waiting)


def rubric_qrels_visible(
    *, track: Track, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> dict[str, dict[str, int]] | None:
    """The track's Rubric-Qrels as this user may see them: organisers those of the current
    grades (what scoring would use now); others those of the snapshot whose leaderboard they
    may see, else None."""
    if campaign_role(campaign=track.campaign, user=user) == Role.ORGANISER:
        return rubric_track(track=track).qrels()
    evaluation = evaluation_visible(track=track, user=user, now=now)
    if evaluation is None:
        return None
    qrels: dict[str, dict[str, int]] = evaluation.qrels
    return qrels


def graded_paragraphs(*, data: RubricTrack, qid: str) -> list[GradedParagraph]:
    """One query's pool as the workbench export writes it: each passage's text, the
    ranks the track's runs give it, and its grade (with the extracted answer and the
    judge) on each item, by docid."""
    docids = sorted(data.pool.get(qid, ()))
    names = {run.pk: run.name for run in data.runs}
    ranks: dict[str, list[SystemRank]] = {docid: [] for docid in docids}
    texts: dict[str, str] = {}
    for run_id, docid, rank, score, text in (
            RankedPassage.objects.filter(run__in=data.runs, qid=qid, docid__in=docids)
            .order_by("run__name", "rank").values_list("run_id", "docid", "rank", "score",
                                                       "text")):
        ranks[docid].append(SystemRank(run=names[run_id], rank=rank, score=score))
        if text:
            texts[docid] = text  # a response's segment carries its own text
    if kind_of(data.track.kind).ranked:  # a ranking names the corpus's passages
        texts.update(CorpusPassage.objects.filter(campaign_id=data.track.campaign_id,
                                                  docid__in=docids)
                     .values_list("docid", "text"))
    counted = data.grades.get(qid, {})
    grades: dict[str, list[ItemGrade]] = {docid: [] for docid in docids}
    links = (fresh_grade_links(campaign=data.track.campaign)
             .filter(qid=qid, docid__in=docids).order_by("docid", "item__item_id")
             .values_list("docid", "item__item_id", "item__target", "judgment__judge_model",
                          "judgment__prompt_version", "judgment__llm_label",
                          "judgment__edited_label"))
    for docid, item_id, target, model, version, llm_label, edited_label in links:
        if item_id not in counted.get(docid, {}):
            continue
        label = edited_label if edited_label is not None else llm_label
        grades[docid].append(ItemGrade(
            item_id=item_id, target=target, grade=counted_grade(label),
            answer=str((label or {}).get("answer", "")), judge_model=model,
            prompt_version=version, edited=edited_label is not None))
    return [
        GradedParagraph(
            docid=docid, text=texts.get(docid, ""), rankings=tuple(ranks[docid]),
            grades=tuple(grades[docid]),
            label=rubric_label(counted[docid], label=data.track.label,
                               min_grade=data.track.min_grade) if docid in counted else None)
        for docid in docids
    ]
