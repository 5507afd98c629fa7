"""A toy kind of track for the registry test: its behaviour, named by dotted path as every
kind's is. A toy run file holds lines `qid docid`; its score is how many passages it ranks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from campaign.models import Track
from scoring.models import Evaluation, RunScore
from submissions.checks import RunRefused
from submissions.formats.common import Problem
from submissions.models import PassageRecord, Run, RunStatus
from submissions.stores import Storing

#: What the toy kind's behaviour was asked, in order, by the layers that asked it.
CALLS: list[str] = []


def team_of(track: Track, name: str) -> str:
    """`[Team]-toy`: the team, or refused."""
    team, _, rest = name.partition("-")
    if rest != "toy":
        raise RunRefused(400, f"{name} is not a toy run name; expected [Team]-toy")
    CALLS.append(f"named {name}")
    return team


def store(storing: Storing) -> list[Problem]:
    lines = storing.file.read(-1).decode().splitlines()
    problems = [Problem(number, "qid", "not a question") for number, line in
                enumerate(lines, start=1) if line.split()[0] not in storing.known_qids]
    if not problems:
        PassageRecord.objects.bulk_create(
            PassageRecord(run=storing.run, qid=qid, rank=rank, doc_id=docid, text=docid)
            for rank, (qid, docid) in enumerate((line.split() for line in lines), start=1))
        storing.run.questions = len({line.split()[0] for line in lines})
        storing.run.records = len(lines)
    CALLS.append(f"stored {storing.run.name}")
    return problems


@dataclass
class ToyReport:
    judge_calls: int = 0
    needs_review: int = 0


def grade(*, run: Run, **kwargs: Any) -> ToyReport:
    CALLS.append(f"graded {run.name}")
    return ToyReport()


def score(*, track: Track, scoring: Any) -> Evaluation:
    runs = list(Run.objects.filter(track=track).current().judged().order_by("name"))
    evaluation = Evaluation.objects.create(track=track, judge="toy", questions=0,
                                           judgment_edits_seen=scoring.judgment_edits_seen,
                                           fingerprint="toy")
    RunScore.objects.bulk_create(
        RunScore(evaluation=evaluation, run=run, per_question={},
                 aggregates={"passages": float(run.records)}) for run in runs)
    Run.objects.filter(pk__in=[run.pk for run in runs]).update(status=RunStatus.SCORED)
    CALLS.append(f"scored {track.slug}")
    return evaluation


def archive(*, evaluation: Evaluation, full: bool) -> None:
    return None
