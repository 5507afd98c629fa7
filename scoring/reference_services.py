"""Writes for meta-evaluation (docs/rubric.md): the organisers' manual reference of
a ranking or response track, its manual qrels and/or official leaderboard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from campaign.models import Question, Track
from scoring.models import ManualReference
from submissions.formats.common import Problem
from submissions.formats.official_leaderboard import parse_official_leaderboard
from submissions.formats.trec_qrels import parse_trec_qrels

#: Each file's cap: manual qrels of a TREC track run to some megabytes; this leaves room
#: and keeps one upload's JSON row (and its parse in memory) bounded.
REFERENCE_MAX_BYTES = 32 * 1024 * 1024

FIELD_QRELS = "qrels"
FIELD_LEADERBOARD = "leaderboard"
TOO_LARGE = "the {what} file is {size} bytes; the limit is {limit} bytes"
INVALID_REFERENCE = "the reference has {count} problem(s); nothing was stored; see errors"


@dataclass(frozen=True)
class ReferenceUpload:
    """One uploaded file of a reference: its stream, size in bytes and name."""

    file: BinaryIO
    size: int
    filename: str = ""


class ReferenceRefused(Exception):
    """The upload was refused and nothing stored; `errors` as the API's items:
    {field, message} and, for a line of a file, `line`."""

    def __init__(self, detail: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors


def reference_upload(
    *,
    track: Track,
    user: User,
    qrels: ReferenceUpload | None,
    leaderboard: ReferenceUpload | None,
    relevant_level: int = 1,
) -> ManualReference:
    """Store manual qrels and/or an official leaderboard as `track`'s reference, replacing (and
    keeping) the current one; on any problem of either file, each named by its file and line,
    nothing is stored (ReferenceRefused)."""
    errors: list[dict[str, Any]] = []
    for upload, what in ((qrels, FIELD_QRELS), (leaderboard, FIELD_LEADERBOARD)):
        if upload is not None and upload.size > REFERENCE_MAX_BYTES:
            message = TOO_LARGE.format(what=what, size=upload.size, limit=REFERENCE_MAX_BYTES)
            errors.append({"field": what, "message": message})
    if errors:
        raise ReferenceRefused(errors[0]["message"] if len(errors) == 1 else
                               INVALID_REFERENCE.format(count=len(errors)), errors)
    levels: dict[str, dict[str, int]] | None = None
    scores: dict[str, float] | None = None
    if qrels is not None:
        known = set(Question.objects.filter(campaign_id=track.campaign_id)
                    .values_list("qid", flat=True))
        read_qrels = parse_trec_qrels(qrels.file, known_qids=known)
        errors += _problem_items(FIELD_QRELS, read_qrels.problems)
        levels = read_qrels.levels
    if leaderboard is not None:
        read_board = parse_official_leaderboard(leaderboard.file)
        errors += _problem_items(FIELD_LEADERBOARD, read_board.problems)
        scores = read_board.scores
    if errors:
        raise ReferenceRefused(INVALID_REFERENCE.format(count=len(errors)), errors)
    now = timezone.now()
    reference = ManualReference(
        track=track, qrels=levels, leaderboard=scores, relevant_level=relevant_level,
        qrels_filename=(qrels.filename if qrels else "")[:255],
        leaderboard_filename=(leaderboard.filename if leaderboard else "")[:255],
        uploaded_by=user, uploaded_at=now)
    # The one-current constraint is left to the database: the update below makes room
    # for this row in the same transaction, which a check run now could not see.
    reference.full_clean(exclude=["track", "uploaded_by"])
    with transaction.atomic():
        # One upload at a time per track: the lock orders two replacements, so the
        # second replaces the first instead of failing on the one-current constraint.
        Track.objects.select_for_update().filter(pk=track.pk).first()
        ManualReference.objects.filter(track=track, replaced_at=None).update(replaced_at=now)
        reference.save()
    return reference


def _problem_items(what: str, problems: list[Problem]) -> list[dict[str, Any]]:
    return [{"field": f"{what}.{problem.field}", "line": problem.line,
             "message": problem.message} for problem in problems]
