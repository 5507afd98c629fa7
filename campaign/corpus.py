"""Streaming a RUBRIC campaign's `corpus:` file into the database, a batch at a time, in
the load's one transaction; a reload adds new passages and refuses a changed text
(docs/formats.md, "Corpus")."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from campaign.campaign_file.rubric_files import file_problem
from campaign.models import Campaign, CorpusPassage
from submissions.formats.common import Problem, excerpt
from submissions.formats.corpus import KEY_DOCID, KEY_TEXT, iter_corpus
from submissions.formats.corpus import CorpusPassage as PassageLine

#: Passages per bulk_create and per lookup of stored texts.
CORPUS_BATCH = 5_000
#: `CorpusPassage.docid`'s column; TREC docids are far shorter.
MAX_DOCID_CHARS = CorpusPassage._meta.get_field("docid").max_length or 200

DOCID_TOO_LONG = "found a docid of {} characters; expected at most {}"
TEXT_CHANGED = (
    "found a new text for docid {!r}; expected the text already loaded (a loaded passage "
    "keeps its text: runs and grades cite it)"
)
PASSAGES_KEPT = (
    "{count} passage(s) of the stored corpus are no longer in {file}; they are kept "
    "(runs may cite them)"
)


@dataclass
class DataFileLoad:
    """What loading one data file did, or why it must not be kept (`problems`)."""

    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def corpus_load(
    *, campaign: Campaign, path: Path, batch_size: int | None = None
) -> DataFileLoad:
    """Stream the corpus file `path` into `campaign`'s passages, `batch_size` at a time; the
    caller's transaction must roll back when `problems` is not empty, as batches are stored
    before the end of the file is read. After a problem nothing more is stored."""
    problems: list[Problem] = []
    new = in_file = 0
    with path.open("rb") as binary:
        passages = _numbered(
            iter_corpus(binary, problems, max_chars=settings.MAX_PASSAGE_CHARS), problems)
        while batch := tuple(itertools.islice(passages, batch_size or CORPUS_BATCH)):
            in_file += len(batch)
            fresh = _new_passages(campaign, batch, problems)
            if not problems:
                CorpusPassage.objects.bulk_create(fresh)
                new += len(fresh)
    problems.sort(key=lambda problem: problem.line)  # the database's among the file's
    load = DataFileLoad(problems=[file_problem(path, problem) for problem in problems])
    if load.problems:
        return load
    load.counts = {"passages": in_file, "new passages": new}
    kept = CorpusPassage.objects.filter(campaign=campaign).count() - in_file
    if kept > 0:
        load.warnings.append(PASSAGES_KEPT.format(count=kept, file=path.name))
    return load


def _new_passages(
    campaign: Campaign, batch: tuple[tuple[int, PassageLine], ...], problems: list[Problem]
) -> list[CorpusPassage]:
    """The passages of `batch` not stored yet; a stored docid with another text, or a
    docid too long to store, is a problem of its line."""
    stored = dict(
        CorpusPassage.objects.filter(campaign=campaign, docid__in=[p.docid for _, p in batch])
        .values_list("docid", "text")
    )
    fresh: list[CorpusPassage] = []
    for line, passage in batch:
        if len(passage.docid) > MAX_DOCID_CHARS:
            problems.append(Problem(line, KEY_DOCID,
                                    DOCID_TOO_LONG.format(len(passage.docid), MAX_DOCID_CHARS)))
        elif passage.docid not in stored:
            fresh.append(CorpusPassage(campaign=campaign, docid=passage.docid, text=passage.text))
        elif stored[passage.docid] != passage.text:
            problems.append(Problem(line, KEY_TEXT, TEXT_CHANGED.format(excerpt(passage.docid))))
    return fresh


def _numbered(
    passages: Iterable[PassageLine], problems: list[Problem]
) -> Iterator[tuple[int, PassageLine]]:
    """Each passage with its line in the file: `iter_corpus` reports a bad line before it reads
    on, so a passage's line is the next one no problem names."""
    line = 0
    looked_at = 0
    bad_lines: set[int] = set()
    for passage in passages:
        bad_lines.update(problem.line for problem in problems[looked_at:])
        looked_at = len(problems)
        line += 1
        while line in bad_lines:
            line += 1
        yield line, passage
