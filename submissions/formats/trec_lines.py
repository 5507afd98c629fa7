"""Reading a trec_eval-style file (runs, qrels): white-space-separated fields, a line each.

trec_eval skips comment lines (``#``); blank lines are skipped too (trec_eval would
refuse them, which helps no one). A line that is not UTF-8 or holds a control
character is a problem with its line and column, and is not split.
"""

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
    """(line number, its fields) for each line that is neither blank nor a comment.

    The fields are None where the line's problem was appended to `problems` instead, so
    that the caller still counts the line as one read (a file of only bad lines is not
    "empty").
    """
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
