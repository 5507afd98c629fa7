"""Each kind's scoring of one track into a snapshot, as the track-kind registry names it: its
inputs read from the database, its numbers from `scoring.track_scores` (as the replay's), its
rows and statistics stored. AC tracks are scored first: their judgments give the PR qrels."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from django.db import transaction
from django.db.models import Q

from campaign.models import Campaign, Track
from grading.models import JudgeSlot, Judgment
from grading.selectors import JudgedAnswerBlock, marked_run
from scoring.measures import JudgedAnswer
from scoring.measures.catalogue import ranking_key
from scoring.models import Evaluation, RunScore
from scoring.rubric_selectors import rubric_judges, rubric_track
from scoring.selectors import derived_qrels, graded_ac_runs
from scoring.track_scores import (
    RubricInputs,
    Tests,
    TrackScores,
    ac_scores,
    pr_scores,
    rubric_scores,
)
from submissions.models import PassageRecord, Run, RunStatus


class ScoringProgress(Protocol):
    """Hears how many steps scoring a campaign takes (a marked run read, a track scored)
    and each step as it ends; the `score` and `grade` commands draw a bar with it."""

    def planned(self, steps: int) -> None: ...

    def done(self, step: str) -> None: ...


class Unwatched:
    def planned(self, steps: int) -> None:
        pass

    def done(self, step: str) -> None:
        pass


@dataclass
class CampaignScoring:
    """What scoring a campaign's tracks reads once for all of them, each piece when first asked:
    the questions, the graded AC runs' marked blocks, the PR qrels they give."""

    campaign: Campaign
    judgment_edits_seen: int  # counted before any judgment was read
    progress: ScoringProgress = field(default_factory=Unwatched)

    @cached_property
    def qids(self) -> list[str]:
        return list(self.campaign.questions.order_by("position", "qid")
                    .values_list("qid", flat=True))

    @cached_property
    def ac_runs(self) -> list[Run]:
        return graded_ac_runs(campaign=self.campaign)

    @cached_property
    def blocks(self) -> dict[int, list[JudgedAnswerBlock]]:
        blocks = {}
        for run in self.ac_runs:
            blocks[run.pk] = marked_run(run=run)
            self.progress.done(f"read {run.name}")
        return blocks

    @cached_property
    def qrels(self) -> dict[str, dict[str, int]]:
        return derived_qrels(self.blocks)


def _judge_summary(runs: Sequence[Run]) -> tuple[str, int]:
    """'model (prompt versions)' of the judgments behind `runs`, and how many were edited."""
    judgments = {
        j.pk: j for j in Judgment.objects.filter(
            Q(nugget_links__nugget__run__in=runs, nugget_links__slot=JudgeSlot.OFFICIAL)
            | Q(answer_links__answer__run__in=runs, answer_links__slot=JudgeSlot.OFFICIAL)
        ).distinct()
    }
    models = sorted({j.judge_model for j in judgments.values()})
    versions = sorted({j.prompt_version for j in judgments.values()})
    judge = f"{', '.join(models)} ({', '.join(versions)})" if models else ""
    return judge, sum(1 for j in judgments.values() if j.edited)


def _fingerprint(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _ac_answers(blocks: list[JudgedAnswerBlock]) -> tuple[dict[str, JudgedAnswer], int]:
    """Judged answers of the complete blocks; blocks waiting for review count as missing."""
    answers, incomplete = {}, 0
    for block in blocks:
        if not block.complete or block.correct is None:
            incomplete += 1
            continue
        answers[block.marked.qid] = JudgedAnswer(
            correct=block.correct, confidence=block.marked.confidence,
            marks=tuple(m.mark for m in block.marked.nuggets),
        )
    return answers, incomplete


def tested_measures(track: Track) -> list[str]:
    """The measures a track's randomised Tukey HSD tests: its ranking measure (Rubric-Cover
    keyed by the track's cover_k), then the organisers' picks."""
    ranking = ranking_key(track.kind, track.cover_k)
    return [ranking, *(key for key in track.significance_tests if key != ranking)]


def _stored(evaluation: Evaluation, runs: Sequence[Run], scored: TrackScores,
            incomplete: dict[int, int] | None = None) -> None:
    """The snapshot's rows, in one insert, and its statistics."""
    RunScore.objects.bulk_create(
        RunScore(evaluation=evaluation, run=run, aggregates=scored.rows[run.name].scores,
                 per_question=scored.rows[run.name].per_question,
                 incomplete_questions=(incomplete or {}).get(run.pk, 0))
        for run in runs)
    evaluation.statistics = scored.statistics.as_json()


def _scored_runs(runs: Sequence[Run]) -> None:
    Run.objects.filter(pk__in=[r.pk for r in runs], status=RunStatus.GRADED).update(
        status=RunStatus.SCORED)


@transaction.atomic
def ac_track(*, track: Track, scoring: CampaignScoring) -> Evaluation:
    """Score every graded AC run of the track into a new snapshot (docs/measures.md)."""
    runs = [run for run in scoring.ac_runs if run.track_id == track.pk]
    judge, edited = _judge_summary(runs)
    evaluation = Evaluation.objects.create(
        track=track, judge=judge, edited_judgments=edited,
        judgment_edits_seen=scoring.judgment_edits_seen, questions=len(scoring.qids),
        fingerprint="")
    answers_of, incomplete_of = {}, {}
    for run in runs:
        answers_of[run.name], incomplete_of[run.pk] = _ac_answers(scoring.blocks[run.pk])
    scored = ac_scores(qids=scoring.qids, answers_of=answers_of,
                       tests=Tests(tested=tested_measures(track)))
    _stored(evaluation, runs, scored, incomplete_of)
    evaluation.needs_review = sum(incomplete_of.values())
    evaluation.fingerprint = _fingerprint({
        name: {qid: [a.correct, a.confidence, list(a.marks)] for qid, a in answers.items()}
        for name, answers in answers_of.items()})
    evaluation.save()
    _scored_runs(runs)
    return evaluation


def _pr_rankings(run: Run) -> dict[str, list[str]]:
    """qid -> the run's PassageKeys ("RUN:RANK") in PassageRank order."""
    rankings: dict[str, list[str]] = {}
    for qid, rank in PassageRecord.objects.filter(run=run).order_by("qid", "rank") \
            .values_list("qid", "rank"):
        rankings.setdefault(qid, []).append(f"{run.name}:{rank}")
    return rankings


@transaction.atomic
def pr_track(*, track: Track, scoring: CampaignScoring) -> Evaluation:
    """Score every current PR run of the track on the qrels derived from AC judgments."""
    qrels = scoring.qrels
    runs = list(Run.objects.filter(track=track).current().accepted().not_withdrawn()
                .select_related("team").order_by("name"))
    evaluation = Evaluation.objects.create(
        track=track, judge="derived from AC judgments",
        judgment_edits_seen=scoring.judgment_edits_seen, questions=len(qrels), qrels=qrels,
        fingerprint="")
    scored = pr_scores(qrels=qrels, rankings_of={run.name: _pr_rankings(run) for run in runs},
                       tests=Tests(tested=tested_measures(track)))
    _stored(evaluation, runs, scored)
    evaluation.fingerprint = _fingerprint({"qrels": qrels, "runs": [run.name for run in runs]})
    evaluation.save()
    return evaluation


@transaction.atomic
def rubric_track_scored(*, track: Track, scoring: CampaignScoring) -> Evaluation:
    """Score every graded run of a ranking or response track on its pool's grades into a
    snapshot that keeps the Rubric-Qrels and settings (docs/results.md, "Snapshots")."""
    data = rubric_track(track=track)
    judges = rubric_judges(data=data)
    qrels = data.qrels()
    evaluation = Evaluation.objects.create(
        track=track, judge=judges.judge, edited_judgments=judges.edited,
        needs_review=judges.needs_review, judgment_edits_seen=scoring.judgment_edits_seen,
        questions=len(data.qids), qrels=qrels, params=data.params(), fingerprint="")
    scored = rubric_scores(RubricInputs(
        kind=track.kind, qids=data.qids,
        rankings_of={run.name: data.rankings[run.pk] for run in data.runs},
        grades=data.grades, items=data.items, qrels=qrels, min_grade=track.min_grade,
        value_k=data.value_k, name_k=track.cover_k), Tests(tested=tested_measures(track)))
    _stored(evaluation, data.runs, scored)
    evaluation.fingerprint = _fingerprint({"grades": data.grades, "items": data.items,
                                           "params": data.params(),
                                           "runs": [run.name for run in data.runs]})
    evaluation.save()
    _scored_runs(data.runs)
    return evaluation
