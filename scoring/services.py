"""Writes for scoring: evaluate every track of a campaign into a snapshot; publish it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from campaign.models import RUBRIC_TRACK_KINDS, Campaign, Track, TrackKind
from grading.agreement.report import label_provenance
from grading.models import JudgeSlot, Judgment
from grading.selectors import JudgedAnswerBlock, marked_run
from scoring.measures import JudgedAnswer, score_ac_track, score_pr_track
from scoring.measures.catalogue import ranking_key
from scoring.measures.rubric import pooled_cover, score_rubric_run
from scoring.models import Evaluation, PublishOverride, RunScore
from scoring.recompute import add_extra_measures, snapshot_statistics
from scoring.rubric_selectors import rubric_judges, rubric_track
from scoring.selectors import (
    PublishProblem,
    derived_qrels,
    evaluation_publish_check,
    graded_ac_runs,
    judgment_edit_count,
    runs_behind,
)
from submissions.models import PassageRecord, Run, RunStatus


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


@transaction.atomic
def track_score_ac(*, track: Track, qids: list[str],
                   blocks_of: Mapping[int, list[JudgedAnswerBlock]], runs: list[Run],
                   judgment_edits_seen: int) -> Evaluation:
    """Score every graded AC run of the track into a new snapshot (docs/measures.md);
    `judgment_edits_seen` is the campaign's edit count taken before `blocks_of` was read."""
    judge, edited = _judge_summary(runs)
    evaluation = Evaluation.objects.create(track=track, judge=judge, edited_judgments=edited,
                                           judgment_edits_seen=judgment_edits_seen,
                                           questions=len(qids), fingerprint="")
    answers_of, incomplete_of = {}, {}
    for run in runs:
        answers_of[run.pk], incomplete_of[run.pk] = _ac_answers(blocks_of[run.pk])
    scores_of = score_ac_track(qids=qids, runs=answers_of) if runs else {}
    rows, per_question_of = [], []
    for run in runs:
        scores = scores_of[run.pk]
        aggregates, per_question = scores.leaderboard_row(), scores.per_question()
        add_extra_measures(TrackKind.AC, aggregates, per_question, qids=qids,
                           answers=answers_of[run.pk])
        rows.append(RunScore(evaluation=evaluation, run=run, aggregates=aggregates,
                             per_question=per_question,
                             incomplete_questions=incomplete_of[run.pk]))
        per_question_of.append(per_question)
    RunScore.objects.bulk_create(rows)  # one insert for the snapshot's rows
    names = [run.name for run in runs]
    evaluation.statistics = snapshot_statistics(TrackKind.AC, names, qids, per_question_of,
                                                tested=tested_measures(track)).as_json()
    evaluation.needs_review = sum(incomplete_of.values())
    evaluation.fingerprint = _fingerprint({
        run.name: {qid: [a.correct, a.confidence, list(a.marks)]
                   for qid, a in answers_of[run.pk].items()} for run in runs})
    evaluation.save()
    Run.objects.filter(pk__in=[r.pk for r in runs], status=RunStatus.GRADED).update(
        status=RunStatus.SCORED)
    return evaluation


def _pr_rankings(run: Run) -> dict[str, list[str]]:
    """qid -> the run's PassageKeys ("RUN:RANK") in PassageRank order."""
    rankings: dict[str, list[str]] = {}
    for qid, rank in PassageRecord.objects.filter(run=run).order_by("qid", "rank") \
            .values_list("qid", "rank"):
        rankings.setdefault(qid, []).append(f"{run.name}:{rank}")
    return rankings


@transaction.atomic
def track_score_pr(*, track: Track, qrels: dict[str, dict[str, int]],
                   judgment_edits_seen: int) -> Evaluation:
    """Score every current PR run of the track on the derived qrels, all together
    (`score_pr_track`); `judgment_edits_seen` is taken before the qrels were derived."""
    runs = list(Run.objects.filter(track=track).current().accepted().not_withdrawn()
                .select_related("team").order_by("name"))
    evaluation = Evaluation.objects.create(track=track, judge="derived from AC judgments",
                                           judgment_edits_seen=judgment_edits_seen,
                                           questions=len(qrels), qrels=qrels, fingerprint="")
    rankings_of = {run.pk: _pr_rankings(run) for run in runs}
    scores_of = score_pr_track(qrels=qrels, runs=rankings_of) if qrels else {}
    rows, per_question_of = [], []
    for run in runs:
        aggregates: dict[str, float] = {}
        per_question: dict[str, dict[str, float]] = {}
        if qrels:
            scores = scores_of[run.pk]
            aggregates, per_question = scores.leaderboard_row(), scores.per_question()
            add_extra_measures(TrackKind.PR, aggregates, per_question, qrels=qrels,
                               rankings=rankings_of[run.pk])
        rows.append(RunScore(evaluation=evaluation, run=run, aggregates=aggregates,
                             per_question=per_question))
        per_question_of.append(per_question)
    RunScore.objects.bulk_create(rows)  # one insert for the snapshot's rows
    names = [run.name for run in runs]
    evaluation.statistics = snapshot_statistics(TrackKind.PR, names, sorted(qrels),
                                                per_question_of,
                                                tested=tested_measures(track)).as_json()
    evaluation.fingerprint = _fingerprint({"qrels": qrels, "runs": names})
    evaluation.save()
    return evaluation


@transaction.atomic
def track_score_rubric(*, track: Track, judgment_edits_seen: int) -> Evaluation:
    """Score every graded run of a ranking or response track on its pool's grades into a
    snapshot that keeps the Rubric-Qrels and settings (docs/results.md, "Snapshots");
    `judgment_edits_seen` is taken before the grades were read."""
    data = rubric_track(track=track)
    judges = rubric_judges(data=data)
    qrels = data.qrels()
    evaluation = Evaluation.objects.create(
        track=track, judge=judges.judge, edited_judgments=judges.edited,
        needs_review=judges.needs_review, judgment_edits_seen=judgment_edits_seen,
        questions=len(data.qids), qrels=qrels, params=data.params(), fingerprint="")
    pooled = pooled_cover(runs=[data.rankings[run.pk] for run in data.runs],
                          grades=data.grades, items=data.items, k=data.value_k,
                          min_grade=track.min_grade)
    names, per_question_of, rows = [], [], []
    for run in data.runs:
        rankings = data.rankings[run.pk]
        scores = score_rubric_run(rankings=rankings, grades=data.grades, items=data.items,
                                  qrels=qrels, pooled=pooled, min_grade=track.min_grade,
                                  cover_k=data.value_k, name_k=track.cover_k)
        aggregates, per_question = scores.leaderboard_row(), scores.per_question()
        add_extra_measures(track.kind, aggregates, per_question, name_k=track.cover_k,
                           rankings=rankings, grades=data.grades, items=data.items,
                           qrels=qrels, min_grade=track.min_grade, cover_k=data.value_k)
        rows.append(RunScore(evaluation=evaluation, run=run, aggregates=aggregates,
                             per_question=per_question))
        names.append(run.name)
        per_question_of.append(per_question)
    RunScore.objects.bulk_create(rows)  # one insert for the snapshot's rows
    evaluation.statistics = snapshot_statistics(track.kind, names, data.qids,
                                                per_question_of, tested=tested_measures(track),
                                                cover_k=track.cover_k).as_json()
    evaluation.fingerprint = _fingerprint({"grades": data.grades, "items": data.items,
                                           "params": data.params(), "runs": names})
    evaluation.save()
    Run.objects.filter(pk__in=[r.pk for r in data.runs], status=RunStatus.GRADED).update(
        status=RunStatus.SCORED)
    return evaluation


class ScoringProgress(Protocol):
    """Hears how many steps scoring a campaign takes (a marked run read, a track scored)
    and each step as it ends; the `score` and `grade` commands draw a bar with it."""

    def planned(self, steps: int) -> None: ...

    def done(self, step: str) -> None: ...


class _Unwatched:
    def planned(self, steps: int) -> None:
        pass

    def done(self, step: str) -> None:
        pass


def campaign_score(
    *, campaign: Campaign, progress: ScoringProgress | None = None
) -> list[Evaluation]:
    """Score every track: AC runs from their judgments, then PR runs on the derived qrels,
    then ranking and response runs on their test banks' grades."""
    # Counted before any judgment is read: an edit that commits later makes these
    # snapshots stale even if the reads below happened to see it (a needless re-score at
    # worst), and one that committed earlier is in what they read.
    edits_seen = judgment_edit_count(campaign=campaign)
    qids = list(campaign.questions.order_by("position", "qid").values_list("qid", flat=True))
    ac_runs = graded_ac_runs(campaign=campaign)
    ac_tracks = list(campaign.tracks.filter(kind=TrackKind.AC).order_by("slug"))
    pr_tracks = list(campaign.tracks.filter(kind=TrackKind.PR).order_by("slug"))
    rubric_tracks = list(campaign.tracks.filter(kind__in=RUBRIC_TRACK_KINDS).order_by("slug"))
    progress = progress or _Unwatched()
    progress.planned(len(ac_runs) + len(ac_tracks) + len(pr_tracks) + len(rubric_tracks))
    blocks = {}
    for run in ac_runs:
        blocks[run.pk] = marked_run(run=run)
        progress.done(f"read {run.name}")
    evaluations = []
    for track in ac_tracks:
        runs = [run for run in ac_runs if run.track_id == track.pk]
        evaluations.append(track_score_ac(track=track, qids=qids, blocks_of=blocks, runs=runs,
                                          judgment_edits_seen=edits_seen))
        progress.done(f"scored track {track.slug}")
    qrels = derived_qrels(blocks)
    for track in pr_tracks:
        evaluations.append(track_score_pr(track=track, qrels=qrels,
                                          judgment_edits_seen=edits_seen))
        progress.done(f"scored track {track.slug}")
    for track in rubric_tracks:
        evaluations.append(track_score_rubric(track=track, judgment_edits_seen=edits_seen))
        progress.done(f"scored track {track.slug}")
    return evaluations


class PublishRefused(Exception):
    """A snapshot that may not be published yet; `problems` say why and what to do."""

    def __init__(self, problems: list[PublishProblem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems

    @property
    def waivable(self) -> bool:
        """Would publishing with `force` go through (only unreviewed doubt stands)?"""
        return all(p.waivable for p in self.problems)


@dataclass(frozen=True)
class Publication:
    evaluation: Evaluation
    override: PublishOverride | None  # set when `force` went over unreviewed doubt


@transaction.atomic
def evaluation_publish(
    *, evaluation: Evaluation, user: AbstractBaseUser, force: bool = False
) -> Publication:
    """Publish a snapshot: participants see it now, the public from results_release. Refused
    (PublishRefused, nothing written) while stale or resting on unreviewed doubt; `force` goes
    over the doubt only, recorded (docs/results.md, "Publishing")."""
    # Locked: two organisers publishing at once leave one consistent stamp.
    evaluation = Evaluation.objects.select_for_update(of=("self",)).select_related(
        "track__campaign").get(pk=evaluation.pk)
    check = evaluation_publish_check(evaluation=evaluation)
    problems = check.problems(force=force)
    if problems:
        raise PublishRefused(problems)
    now = timezone.now()
    override = None
    if check.doubtful:
        override = PublishOverride(
            evaluation=evaluation, published_by_id=user.pk, published_at=now,
            review_below=check.review_below, doubtful_unreviewed=len(check.doubtful),
            judgments=check.doubtful,
        )
        override.full_clean()
        override.save()
    evaluation.published_at = now
    evaluation.published_by_id = user.pk
    evaluation.labels = label_provenance(campaign=evaluation.track.campaign,
                                         runs=runs_behind(evaluation))
    evaluation.save(update_fields=["published_at", "published_by", "labels"])
    return Publication(evaluation=evaluation, override=override)


def evaluation_unpublish(*, evaluation: Evaluation) -> Evaluation:
    evaluation.published_at = None
    evaluation.published_by = None
    evaluation.save(update_fields=["published_at", "published_by"])
    return evaluation
