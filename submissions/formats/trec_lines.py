"""Reading trec_eval-style files (runs, qrels): white-space-separated fields, blank and
``#`` lines skipped, bad UTF-8 and control characters reported with their line."""

from __future__ import annotations

from collections.abc import Iterator

from .common import (
    ASCII_WHITESPACE,
    FIELD_LINE,
    BinaryReader,
    Problem,
    decode_line,
    iter_raw_lines,
    strip_cr,
)
from .control_characters import line_control_problem


def iter_trec_fields(
    binary_file: BinaryReader, problems: list[Problem]
) -> Iterator[tuple[int, list[str] | None]]:
    """(line number, fields) per line that is neither blank nor a comment; fields are None
    where the line's problem was reported, so it still counts as read."""
    for lineno, raw in iter_raw_lines(binary_file):
        decoded = decode_line(strip_cr(raw), lineno)
        if isinstance(decoded, Problem):
            problems.append(decoded)
            yield lineno, None
            continue
        content = decoded.lstrip(ASCII_WHITESPACE)
        if not content or content.startswith("#"):
            continue
        control = line_control_problem(decoded, lineno, FIELD_LINE)
        if control is not None:
            problems.append(control)
            yield lineno, None
            continue
        yield lineno, [part for part in decoded.replace("\t", " ").split(" ") if part]
