"""What the results archive keeps of a track besides its board, by kind, as the track-kind
registry names it: the qrels file its board was computed on, where the archive may show it."""

from __future__ import annotations

from scoring.exports import qrels_text, rubric_qrels_text
from scoring.models import Evaluation


def pr_track(*, evaluation: Evaluation, full: bool) -> str | None:
    """The derived PR qrels, in the organisers' full archive only (docs/access.md)."""
    return qrels_text(evaluation.qrels) if full and evaluation.qrels else None


def ac_track(*, evaluation: Evaluation, full: bool) -> None:
    """Nothing: an AC board's numbers come from its runs and judgments, archived apart."""
    return None


def rubric_track(*, evaluation: Evaluation, full: bool) -> str | None:
    """The Rubric-Qrels of a published board: anyone's who may see the board."""
    return rubric_qrels_text(evaluation.qrels) if evaluation.qrels else None
