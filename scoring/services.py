"""Writes for scoring: evaluate every track of a campaign into a snapshot; publish it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from campaign.models import Campaign, Track, TrackKind
from grading.models import JudgeSlot, Judgment
from grading.selectors import JudgedAnswerBlock, marked_run
from scoring.measures import (
    JudgedAnswer,
    randomised_tukey_hsd,
    score_ac_run,
    score_pr_run,
)
from scoring.measures.stats import mean_ci, two_way_anova
from scoring.models import Evaluation, PublishOverride, RunScore
from scoring.selectors import (
    PublishProblem,
    derived_qrels,
    evaluation_publish_check,
    graded_ac_runs,
    judgment_edit_count,
)
from submissions.models import PassageRecord, Run, RunStatus

# The measure each track's statistics (CIs, Tukey HSD) are computed on.
MAIN_MEASURE = {TrackKind.AC: "nugget_precision", TrackKind.PR: "ndcg@10"}
HSD_PERMUTATIONS = 5000  # B, the NTCIR practice
HSD_SEED = 20260401  # fixed: re-scoring the same judgments gives the same p-values
GRADED = [RunStatus.GRADED, RunStatus.SCORED]


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


def _statistics(run_names: list[str], matrix: list[list[float]]) -> dict[str, Any]:
    """Mean with 95% CI per run; randomised Tukey HSD and two-way ANOVA over all runs."""
    stats: dict[str, Any] = {"ci": {}, "hsd": [], "anova": None}
    if not matrix or not run_names:
        return stats
    scores = np.asarray(matrix, dtype=np.float64)  # topics x runs
    for index, name in enumerate(run_names):
        if scores.shape[0] >= 2:
            ci = mean_ci(scores[:, index])
            stats["ci"][name] = {"mean": ci.mean, "lower": ci.lower, "upper": ci.upper}
    if len(run_names) >= 2:
        hsd = randomised_tukey_hsd(scores, run_names=run_names,
                                   n_permutations=HSD_PERMUTATIONS, seed=HSD_SEED)
        stats["hsd"] = [
            {"a": pair.run_a, "b": pair.run_b, "difference": pair.difference,
             "p_value": pair.p_value}
            for pair in hsd.pairs()
        ]
        stats["hsd_permutations"] = HSD_PERMUTATIONS
        if scores.shape[0] >= 2:
            anova = two_way_anova(scores)
            stats["anova"] = {"residual_variance": anova.residual_variance,
                              "f_system": anova.f_system, "p_system": anova.p_system}
    return stats


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


@transaction.atomic
def track_score_ac(*, track: Track, qids: list[str],
                   blocks_of: Mapping[int, list[JudgedAnswerBlock]], runs: list[Run],
                   judgment_edits_seen: int) -> Evaluation:
    """Score every graded AC run of the track (DESIGN.md section 6) into a new snapshot.

    `judgment_edits_seen`: the campaign's edit count taken before `blocks_of` was read.
    """
    judge, edited = _judge_summary(runs)
    evaluation = Evaluation.objects.create(track=track, judge=judge, edited_judgments=edited,
                                           judgment_edits_seen=judgment_edits_seen,
                                           questions=len(qids), fingerprint="")
    labels: dict[str, Any] = {}
    names, columns, needs_review = [], [], 0
    for run in runs:
        answers, incomplete = _ac_answers(blocks_of[run.pk])
        needs_review += incomplete
        scores = score_ac_run(qids=qids, answers=answers)
        per_question = {
            "correct": {q.qid: float(q.correct) for q in scores.questions},
            "nugget_precision": {q.qid: q.nugget_precision for q in scores.questions},
            "confidence": {q.qid: q.probability for q in scores.questions},
        }
        RunScore.objects.create(evaluation=evaluation, run=run,
                                aggregates=scores.leaderboard_row(), per_question=per_question,
                                incomplete_questions=incomplete)
        labels[run.name] = {qid: [a.correct, a.confidence, list(a.marks)]
                            for qid, a in answers.items()}
        names.append(run.name)
        columns.append([per_question["nugget_precision"][qid] for qid in qids])
    matrix = [list(row) for row in zip(*columns, strict=True)] if columns else []
    evaluation.statistics = _statistics(names, matrix)
    evaluation.statistics["measure"] = MAIN_MEASURE[TrackKind.AC]
    evaluation.needs_review = needs_review
    evaluation.fingerprint = _fingerprint(labels)
    evaluation.save()
    Run.objects.filter(pk__in=[r.pk for r in runs], status=RunStatus.GRADED).update(
        status=RunStatus.SCORED)
    return evaluation


@transaction.atomic
def track_score_pr(*, track: Track, qrels: dict[str, dict[str, int]],
                   judgment_edits_seen: int) -> Evaluation:
    """Score every current PR run of the track against the derived qrels.

    `judgment_edits_seen`: the campaign's edit count taken before the qrels were derived.
    """
    runs = list(Run.objects.filter(track=track, is_current=True,
                                   status__in=[RunStatus.VALID, *GRADED])
                .select_related("team").order_by("name"))
    evaluation = Evaluation.objects.create(track=track, judge="derived from AC judgments",
                                           judgment_edits_seen=judgment_edits_seen,
                                           questions=len(qrels), qrels=qrels, fingerprint="")
    names, columns = [], []
    relevant_qids = sorted(qrels)
    for run in runs:
        rankings: dict[str, list[str]] = {}
        for qid, rank in PassageRecord.objects.filter(run=run).order_by("qid", "rank") \
                .values_list("qid", "rank"):
            rankings.setdefault(qid, []).append(f"{run.name}:{rank}")
        if qrels:
            scores = score_pr_run(qrels=qrels, rankings=rankings)
            aggregates = scores.leaderboard_row()
            per_question = {
                **{f"ndcg@{k}": dict(s.per_question) for k, s in scores.ndcg.items()},
                "q_measure": dict(scores.q_measure.per_question),
                **{f"nerr@{k}": dict(s.per_question) for k, s in scores.nerr.items()},
            }
        else:
            aggregates, per_question = {}, {}
        RunScore.objects.create(evaluation=evaluation, run=run, aggregates=aggregates,
                                per_question=per_question)
        names.append(run.name)
        main = per_question.get(MAIN_MEASURE[TrackKind.PR], {})
        columns.append([main.get(qid, 0.0) for qid in relevant_qids])
    matrix = [list(row) for row in zip(*columns, strict=True)] if columns and qrels else []
    evaluation.statistics = _statistics(names, matrix)
    evaluation.statistics["measure"] = MAIN_MEASURE[TrackKind.PR]
    evaluation.fingerprint = _fingerprint({"qrels": qrels, "runs": names})
    evaluation.save()
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
    """Score every track: AC runs from their judgments, then PR runs on the derived qrels."""
    # Counted before any judgment is read: an edit that commits later makes these
    # snapshots stale even if the reads below happened to see it (a needless re-score at
    # worst), and one that committed earlier is in what they read.
    edits_seen = judgment_edit_count(campaign=campaign)
    qids = list(campaign.questions.order_by("position", "qid").values_list("qid", flat=True))
    ac_runs = graded_ac_runs(campaign=campaign)
    ac_tracks = list(campaign.tracks.filter(kind=TrackKind.AC).order_by("slug"))
    pr_tracks = list(campaign.tracks.filter(kind=TrackKind.PR).order_by("slug"))
    progress = progress or _Unwatched()
    progress.planned(len(ac_runs) + len(ac_tracks) + len(pr_tracks))
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
    """Publish a snapshot: participants see it now, the public after results_release.

    Refused (PublishRefused, nothing written) while the snapshot is stale (computed
    before the latest judgment edit, DESIGN.md section 5.4) or rests on doubtful judgments
    no organiser has reviewed. `force` publishes over the doubt only, and records who
    did, when, over how many judgments and under which threshold (PublishOverride).
    """
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
    evaluation.save(update_fields=["published_at", "published_by"])
    return Publication(evaluation=evaluation, override=override)


def evaluation_unpublish(*, evaluation: Evaluation) -> Evaluation:
    evaluation.published_at = None
    evaluation.published_by = None
    evaluation.save(update_fields=["published_at", "published_by"])
    return evaluation
