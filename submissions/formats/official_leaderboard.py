"""An official leaderboard, CSV ``run,score``, that organisers upload to meta-evaluate a
RUBRIC track (docs/formats.md, "Manual reference for meta-evaluation")."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field

from .common import (
    EMPTY_FILE,
    FIELD_FILE,
    FIELD_LINE,
    BinaryReader,
    Problem,
    excerpt,
    is_blank,
    iter_text_lines,
)
from .control_characters import line_control_problem

LEADERBOARD_HEADER = ("run", "score")

BAD_HEADER = "found the header {!r}; expected run,score"
LEADERBOARD_FIELD_COUNT = "found {} comma-separated field(s); expected 2: run,score"
BAD_CSV = "found a line the CSV reader cannot read ({}); expected run,score"
EMPTY_RUN = "found an empty or blank run name; expected the name of a run"
BAD_SCORE = "found score {!r}; expected a finite decimal number such as 0.5 or -2.5e-3"
DUPLICATE_RUN = "found run {!r} again (first on line {}); expected each run once"

FIELD_HEADER = "header"
FIELD_RUN = "run"
FIELD_SCORE = "score"

# A plain decimal, as the TREC run reader takes scores: no "nan", "inf", "1_0" or hex,
# which Python's float() would accept.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class OfficialLeaderboard:
    """run -> score as read, in file order, and every problem found (with any, the upload is
    refused whole)."""

    scores: dict[str, float]
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def parse_official_leaderboard(binary_file: BinaryReader) -> OfficialLeaderboard:
    """Parse a ``run,score`` CSV from a binary file, reporting every problem in line order."""
    problems: list[Problem] = []
    scores: dict[str, float] = {}
    first_lines: dict[str, int] = {}
    header_seen = False
    rows = 0  # lines after the header, good or bad
    for lineno, line in iter_text_lines(binary_file, problems):
        if line is not None and is_blank(line):
            continue
        rows += header_seen
        if line is None:
            header_seen = True  # a bad first line still takes the header's place
            continue
        control = line_control_problem(line, lineno, FIELD_LINE)
        if control is not None:
            problems.append(control)
            header_seen = True
            continue
        try:
            fields = next(csv.reader([line], strict=True))
        except csv.Error as error:
            problems.append(Problem(lineno, FIELD_LINE, BAD_CSV.format(error)))
            header_seen = True
            continue
        if not header_seen:
            header_seen = True
            if tuple(name.strip().lower() for name in fields) != LEADERBOARD_HEADER:
                problems.append(Problem(lineno, FIELD_HEADER, BAD_HEADER.format(excerpt(line))))
            continue
        if len(fields) != 2:
            problems.append(Problem(lineno, FIELD_LINE,
                                    LEADERBOARD_FIELD_COUNT.format(len(fields))))
            continue
        run, score_text = (value.strip() for value in fields)
        before = len(problems)
        if not run:
            problems.append(Problem(lineno, FIELD_RUN, EMPTY_RUN))
        else:
            first_line = first_lines.setdefault(run, lineno)
            if first_line != lineno:
                problems.append(Problem(lineno, FIELD_RUN,
                                        DUPLICATE_RUN.format(excerpt(run), first_line)))
        score = _score(score_text)
        if score is None:
            problems.append(Problem(lineno, FIELD_SCORE, BAD_SCORE.format(excerpt(score_text))))
        if score is not None and len(problems) == before:
            scores[run] = score
    if rows == 0:
        problems.append(Problem(0, FIELD_FILE, EMPTY_FILE.format("run,score line after the "
                                                                 "header")))
    return OfficialLeaderboard(scores, sorted(problems, key=lambda problem: problem.line))


def _score(text: str) -> float | None:
    if _DECIMAL.fullmatch(text) is None:
        return None
    score = float(text)
    return score if math.isfinite(score) else None  # 1e999 overflows to inf
