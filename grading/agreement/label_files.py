"""Label files: people's labels of a campaign's judgments by their place in the runs,
one JSON object per line, as an organiser exports them or a demo ships them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.models import Campaign
from grading.models import AnswerEvaluation, JudgeSlot, NuggetEntailment
from submissions.models import Run

BAD_JSON = "line {line}: expected a JSON object, found {found!r}"
BAD_PLACE = "line {line}: expected run and qid as text, found {found}"
BAD_LABEL = ("line {line}: expected nugget_num (a whole number) with entailed (true/false), "
             "or correct (true/false) with relevant (a list of NuggetNums); found {found}")


class LabelFileError(ValueError):
    """A label file that cannot be read; the message names each bad line."""


@dataclass(frozen=True)
class FileLabel:
    line: int
    run: str
    qid: str
    nugget_num: int | None  # None: the answer's label
    changes: dict[str, Any]  # as a judgment edit takes them


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _label(number: int, row: dict[str, Any]) -> FileLabel:
    if not isinstance(row.get("run"), str) or not isinstance(row.get("qid"), str):
        raise LabelFileError(BAD_PLACE.format(line=number, found=row))
    place = (number, row["run"], row["qid"])
    if _whole(row.get("nugget_num")) and isinstance(row.get("entailed"), bool):
        return FileLabel(*place, row["nugget_num"], {"entailed": row["entailed"]})
    relevant = row.get("relevant", [])
    if (isinstance(row.get("correct"), bool) and "nugget_num" not in row
            and isinstance(relevant, list) and all(_whole(n) for n in relevant)):
        return FileLabel(*place, None, {"correct": row["correct"], "relevant": relevant})
    raise LabelFileError(BAD_LABEL.format(line=number, found=row))


def read_label_file(path: Path) -> list[FileLabel]:
    labels = []
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as error:
                raise LabelFileError(BAD_JSON.format(line=number, found=text.strip()[:80])) \
                    from error
            if not isinstance(row, dict):
                raise LabelFileError(BAD_JSON.format(line=number, found=row))
            labels.append(_label(number, row))
    return labels


def labels_by_judgment(*, campaign: Campaign,
                       labels: list[FileLabel]) -> dict[int, dict[str, Any]]:
    """The file's labels keyed by the official judgment each place of the current runs
    uses; places no current run has are left out."""
    runs = Run.objects.filter(track__campaign=campaign).current()
    nuggets = {(link.nugget.run.name, link.nugget.qid, link.nugget.nugget_num): link.judgment_id
               for link in NuggetEntailment.objects.filter(
                   slot=JudgeSlot.OFFICIAL, nugget__run__in=runs)
               .select_related("nugget__run")}
    answers = {(link.answer.run.name, link.answer.qid): link.judgment_id
               for link in AnswerEvaluation.objects.filter(
                   slot=JudgeSlot.OFFICIAL, answer__run__in=runs)
               .select_related("answer__run")}
    found: dict[int, dict[str, Any]] = {}
    for label in labels:
        judgment = (answers.get((label.run, label.qid)) if label.nugget_num is None
                    else nuggets.get((label.run, label.qid, label.nugget_num)))
        if judgment is not None:
            found[judgment] = label.changes
    return found
