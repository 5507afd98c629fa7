"""The data files of a RUBRIC campaign: the small test bank is parsed here whole, its items
held to the API's caps; the corpus is only read through here for a report, then streamed in
by `campaign.corpus`."""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path

from django.conf import settings

from campaign.bank_limits import item_limits
from submissions.formats.common import Problem
from submissions.formats.corpus import validate_corpus
from submissions.formats.test_bank import QueryBank, parse_test_bank

#: One problem of a JSONL data file: its path, then `Problem`'s "line N, key: message".
DATA_FILE_PROBLEM = "{path}: {problem}"


def file_problem(path: Path, problem: Problem) -> str:
    return DATA_FILE_PROBLEM.format(path=path, problem=problem)


def read_test_bank(
    path: Path, known_qids: Container[str]
) -> tuple[tuple[QueryBank, ...], list[str]]:
    """The test bank at `path` (workbench JSONL), and every problem of it."""
    with path.open("rb") as binary:
        parsed = parse_test_bank(binary, known_qids=known_qids, limits=item_limits())
    return tuple(parsed.records), [file_problem(path, problem) for problem in parsed.problems]


def corpus_problems(path: Path) -> list[str]:
    """Every problem of a corpus file, read through once, keeping no passage."""
    with path.open("rb") as binary:
        return [file_problem(path, problem) for problem in validate_corpus(
            binary, max_chars=settings.MAX_PASSAGE_CHARS)]
