"""Storing the passages of ranking and response runs, inside `run_submit`'s transaction:
parsed, then written in batches, or nothing written and every problem returned."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator

from django.conf import settings

from campaign.models import Campaign
from campaign.selectors import corpus_missing
from submissions.formats.common import BinaryReader, Problem
from submissions.formats.response_run import KEY_TEXT, parse_response_run, response_passages
from submissions.formats.trec_run import parse_trec_run
from submissions.models import RankedPassage, Run

#: A segment is a passage like any other (held to the limit on a passage): the
#: 100-word cut alone does not bound it, since a "word" is any run of non-space characters.
SEGMENT_TOO_LONG = (
    "found {chars} characters in segment {rank} of the response; expected at most "
    "{limit} characters per passage"
)
# Rows per INSERT: a 50 MB run never sits in memory as ORM objects.
INSERT_BATCH = 2000


def store_ranking_passages(
    run: Run, file: BinaryReader, *, campaign: Campaign, known_qids: Container[str]
) -> list[Problem]:
    """Parse a TREC run and store each query's passages in trec_eval's order, or nothing;
    docids are checked against the corpus in batches, never by loading it."""
    parsed = parse_trec_run(
        file, known_qids=known_qids,
        missing_docids=lambda docids: corpus_missing(campaign=campaign, docids=docids),
    )
    if parsed.problems:
        return parsed.problems
    rankings = parsed.rankings

    def rows() -> Iterator[RankedPassage]:
        # Each query's records are dropped once turned into rows: the parsed run shrinks
        # while the rows are written.
        for qid in list(rankings):
            for rank, record in enumerate(rankings.pop(qid), start=1):
                yield RankedPassage(run=run, qid=qid, rank=rank, docid=record.docid,
                                    score=record.score)

    queries = len(rankings)
    run.questions, run.records = queries, _insert(rows())
    return []


def store_response_passages(
    run: Run, file: BinaryReader, *, known_qids: Container[str]
) -> list[Problem]:
    """Parse a response run; store every response's segments (docid ``RUN:qid:i``)."""
    parsed = parse_response_run(file, known_qids=known_qids)
    if parsed.problems:
        return parsed.problems
    problems: list[Problem] = []
    most = settings.MAX_PASSAGE_CHARS

    def rows() -> Iterator[RankedPassage]:
        for record in parsed.records:
            for passage in response_passages(run.name, record):
                if len(passage.text) > most:
                    problems.append(Problem(record.line, KEY_TEXT, SEGMENT_TOO_LONG.format(
                        chars=len(passage.text), rank=passage.rank, limit=most)))
                if not problems:  # else the run is rejected: keep finding problems only
                    yield RankedPassage(run=run, qid=passage.qid, rank=passage.rank,
                                        docid=passage.docid, text=passage.text)

    # Rows written before a problem is found are rolled back with run_submit's transaction.
    run.questions, run.records = len(parsed.records), _insert(rows())
    return problems


def _insert(rows: Iterable[RankedPassage]) -> int:
    """bulk_create `rows` a batch at a time (bulk_create itself would list them all)."""
    count = 0
    batch: list[RankedPassage] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= INSERT_BATCH:
            RankedPassage.objects.bulk_create(batch)
            count += len(batch)
            batch = []
    RankedPassage.objects.bulk_create(batch)
    return count + len(batch)
