"""The data files of a RUBRIC campaign: the small test bank is parsed here whole; the corpus
is only found here (or read through for a report), then streamed in by `campaign.corpus`."""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path
from typing import Any

from django.conf import settings

from campaign.campaign_file.common import MISSING_DATA_FILE, WRONG_TYPE, _Reader, _type_name
from submissions.formats.common import Problem
from submissions.formats.corpus import validate_corpus
from submissions.formats.test_bank import QueryBank, parse_test_bank

#: One problem of a JSONL data file: its path, then `Problem`'s "line N, key: message".
DATA_FILE_PROBLEM = "{path}: {problem}"


def file_problem(path: Path, problem: Problem) -> str:
    return DATA_FILE_PROBLEM.format(path=path, problem=problem)


def data_file_path(reader: _Reader, key: str, value: Any) -> Path | None:
    """The file named by `key`, relative to the YAML file, if it exists."""
    if not isinstance(value, str):
        reader.add(WRONG_TYPE, key=key, expected="a file path", found=_type_name(value))
        return None
    path = (reader.file.parent / value).resolve()
    if not path.is_file():
        reader.add(MISSING_DATA_FILE, key=key, path=value, base=reader.file.parent)
        return None
    return path


def read_test_bank(
    reader: _Reader, value: Any, known_qids: Container[str]
) -> tuple[tuple[QueryBank, ...], Path | None]:
    """The test bank named by `test_bank:` (workbench JSONL), every problem reported."""
    path = data_file_path(reader, "test_bank", value)
    if path is None:
        return (), None
    with path.open("rb") as binary:
        parsed = parse_test_bank(binary, known_qids=known_qids)
    reader.problems.extend(file_problem(path, problem) for problem in parsed.problems)
    return tuple(parsed.records), path


def corpus_problems(path: Path) -> list[str]:
    """Every problem of a corpus file, read through once, keeping no passage."""
    with path.open("rb") as binary:
        return [file_problem(path, problem) for problem in validate_corpus(
            binary, max_chars=settings.MAX_PASSAGE_CHARS)]
