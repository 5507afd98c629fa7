"""Reads for meta-evaluation: a ranking or response track's latest snapshot against the
organisers' manual reference (Farzi and Dietz, ICTIR 2024, Table 5; the formulas are
`scoring.measures.rubric`'s; docs/results.md, "Meta-evaluation of a RUBRIC track")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from campaign.models import Track
from scoring.leaderboard import snapshot_cover_k
from scoring.measures.catalogue import measures_of
from scoring.measures.rubric import grade_judgment_table, leaderboard_agreement, qrels_kappa
from scoring.models import Evaluation, ManualReference
from scoring.selectors import evaluation_latest

NOT_SCORED = "track {track} of {slug} has not been scored yet: no Rubric leaderboard to compare"
NO_REFERENCE = ("track {track} of {slug} has no manual reference yet: upload manual qrels "
                "and/or an official leaderboard to /api/v1/campaigns/{slug}/reference/")


class NothingToCompare(Exception):
    """The track lacks a snapshot or a reference (or both); the message says which."""


@dataclass(frozen=True)
class MetaEvaluation:
    """A snapshot (the Rubric side) against a reference (the manual side) of one track; which
    parts are None or empty, and when: docs/results.md, "Meta-evaluation of a RUBRIC track"."""

    evaluation: Evaluation
    reference: ManualReference
    min_grade: int
    correlation: dict[str, dict[str, float] | None] | None
    runs: list[str]  # ranked by both leaderboards
    kappa: float | None
    confusion: dict[str, dict[str, int]] | None

    def as_json(self) -> dict[str, Any]:
        """The API's shape, with what the numbers rest on beside."""
        passages = (sum(sum(row.values()) for row in self.confusion.values())
                    if self.confusion is not None else None)
        return {
            "track": self.evaluation.track.slug,
            "correlation": self.correlation,
            "kappa": self.kappa,
            "confusion": self.confusion,
            "evaluation": self.evaluation.pk,
            "computed_at": self.evaluation.computed_at,
            "min_grade": self.min_grade,
            "relevant_level": self.reference.relevant_level,
            "runs": self.runs,
            "passages": passages,
            "reference": reference_summary(self.reference),
        }


def reference_current(*, track: Track) -> ManualReference | None:
    """The track's manual reference now in force (the latest upload), or None."""
    return (ManualReference.objects.filter(track=track, replaced_at=None)
            .select_related("uploaded_by").first())


def reference_summary(reference: ManualReference) -> dict[str, Any]:
    """What a reference holds, in counts, and who uploaded it when."""
    qrels = reference.qrels
    return {
        "id": reference.pk,
        "qrels": None if qrels is None else {
            "file": reference.qrels_filename, "queries": len(qrels),
            "judgments": sum(len(by_docid) for by_docid in qrels.values())},
        "leaderboard": None if reference.leaderboard is None else {
            "file": reference.leaderboard_filename, "runs": len(reference.leaderboard)},
        "relevant_level": reference.relevant_level,
        "uploaded_by": reference.uploaded_by.username if reference.uploaded_by else None,
        "uploaded_at": reference.uploaded_at,
    }


def meta_evaluation(*, track: Track) -> MetaEvaluation:
    """The track's latest snapshot against its current reference, at the snapshot's own
    min_grade; NothingToCompare, naming what is missing, if either is."""
    evaluation = evaluation_latest(track=track)
    reference = reference_current(track=track)
    missing = [message.format(track=track.slug, slug=track.campaign.slug)
               for message, absent in ((NOT_SCORED, evaluation is None),
                                       (NO_REFERENCE, reference is None)) if absent]
    if evaluation is None or reference is None:
        raise NothingToCompare("; ".join(missing))
    # The snapshot's own threshold: the track's may have changed since it was scored.
    min_grade = int(evaluation.params.get("min_grade", track.min_grade))
    correlation: dict[str, dict[str, float] | None] | None = None
    runs: list[str] = []
    if reference.leaderboard is not None:
        official = {run: float(score) for run, score in reference.leaderboard.items()}
        rubric = _rubric_leaderboards(evaluation, track.kind)
        runs = sorted(set(official) & {run for board in rubric.values() for run in board})
        correlation = {key: _agreement(board, official) for key, board in rubric.items()}
    kappa: float | None = None
    confusion: dict[str, dict[str, int]] | None = None
    if reference.qrels is not None:
        rubric_qrels: dict[str, dict[str, int]] = evaluation.qrels
        try:
            kappa = qrels_kappa(rubric_qrels, reference.qrels, min_grade=min_grade,
                                relevant_level=reference.relevant_level)
            confusion = grade_judgment_table(rubric_qrels, reference.qrels)
        except ValueError:  # no passage judged by both: nothing to agree on
            kappa, confusion = None, {}
    return MetaEvaluation(evaluation=evaluation, reference=reference, min_grade=min_grade,
                          correlation=correlation, runs=runs, kappa=kappa, confusion=confusion)


def _rubric_leaderboards(evaluation: Evaluation, kind: str) -> dict[str, dict[str, float]]:
    """measure -> run -> the snapshot's mean, for each leaderboard measure of `kind` under
    the snapshot's keys (a run without a finite value of a measure is left out of that one)."""
    scores = list(evaluation.scores.select_related("run").order_by("run__name"))
    boards: dict[str, dict[str, float]] = {}
    for measure in measures_of(kind, cover_k=snapshot_cover_k(evaluation.params)):
        board: dict[str, float] = {}
        for score in scores:
            value = score.aggregates.get(measure.key)
            if isinstance(value, int | float) and math.isfinite(value):
                board[score.run.name] = float(value)
        boards[measure.key] = board
    return boards


def _agreement(rubric: dict[str, float], official: dict[str, float]) -> dict[str, float] | None:
    try:
        return leaderboard_agreement(rubric, official).as_json()
    except ValueError:  # fewer than two shared runs, or no ranking on one side
        return None
