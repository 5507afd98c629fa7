"""How each kind of run file is stored, as the track-kind registry names it: parsed, then written
in batches inside `run_submit`'s transaction, or nothing written and every problem returned."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from campaign.models import Team, Track
from submissions.formats.ac_run import parse_ac_run
from submissions.formats.common import BinaryReader, Problem
from submissions.formats.pr_run import iter_pr_run
from submissions.models import AnswerRecord, NuggetRecord, PassageRecord, Run
from submissions.rubric_runs import store_ranking_passages, store_response_passages
from submissions.selectors import pr_run_ranks, visible_pr_run_names

# Records are inserted in batches: a 50 MB run never sits in memory as ORM objects.
INSERT_BATCH = 2000


class VisiblePrRuns(Mapping[str, Mapping[str, frozenset[int]]]):
    """The PR runs an AC run may cite: names from one query, a run's ranks loaded only when it
    is cited."""

    def __init__(self, *, track: Track, team: Team, now: datetime) -> None:
        self._names = visible_pr_run_names(campaign=track.campaign, team=team, now=now)
        self._ranks: dict[str, Mapping[str, frozenset[int]]] = {}

    def __getitem__(self, name: str) -> Mapping[str, frozenset[int]]:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._ranks:
            self._ranks[name] = pr_run_ranks(run_id=self._names[name])
        return self._ranks[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)


@dataclass(frozen=True)
class Storing:
    """What storing a run's file needs, whatever its kind."""

    run: Run
    file: BinaryReader
    known_qids: set[str]
    shared: Mapping[str, Mapping[str, frozenset[int]]]  # the PR runs it may cite


def ranking_run(storing: Storing) -> list[Problem]:
    """A ranking run (TREC format), its docids checked against the corpus."""
    return store_ranking_passages(storing.run, storing.file,
                                  campaign=storing.run.track.campaign,
                                  known_qids=storing.known_qids)


def response_run(storing: Storing) -> list[Problem]:
    """A response run (JSONL), its segments stored as passages."""
    return store_response_passages(storing.run, storing.file, known_qids=storing.known_qids)


def pr_run(storing: Storing) -> list[Problem]:
    """A PR run's ranked passages, with their text."""
    run = storing.run
    problems: list[Problem] = []
    batch: list[PassageRecord] = []
    qids: set[str] = set()
    count = 0
    for record in iter_pr_run(storing.file, problems, known_qids=storing.known_qids,
                              max_passage_chars=settings.MAX_PASSAGE_CHARS):
        if problems:
            continue  # the run will be rejected: stop building rows, keep finding problems
        batch.append(PassageRecord(run=run, qid=record.qid, rank=record.rank,
                                   doc_id=record.doc_id, text=record.text))
        qids.add(record.qid)
        if len(batch) >= INSERT_BATCH:
            PassageRecord.objects.bulk_create(batch)
            count += len(batch)
            batch = []
    if not problems:
        PassageRecord.objects.bulk_create(batch)
        run.questions, run.records = len(qids), count + len(batch)
    return problems


def ac_run(storing: Storing) -> list[Problem]:
    """An AC run's answers and the nuggets citing the shared PR runs."""
    run = storing.run
    result = parse_ac_run(storing.file, known_qids=storing.known_qids,
                          shared_pr_runs=storing.shared,
                          max_answer_chars=settings.MAX_ANSWER_CHARS)
    if result.problems:
        return result.problems
    answers = AnswerRecord.objects.bulk_create(
        AnswerRecord(run=run, qid=a.qid, answer=a.answer, confidence=a.confidence)
        for a in result.records
    )
    NuggetRecord.objects.bulk_create(
        (
            NuggetRecord(answer=row, run=run, qid=a.qid, nugget_num=n.nugget_num,
                         pr_run_name=n.passage_key.run_name, passage_rank=n.passage_key.rank,
                         text=n.text)
            for row, a in zip(answers, result.records, strict=True)
            for n in a.nuggets
        ),
        batch_size=INSERT_BATCH,
    )
    run.questions = len(result.records)
    run.records = sum(len(a.nuggets) for a in result.records)
    return []
