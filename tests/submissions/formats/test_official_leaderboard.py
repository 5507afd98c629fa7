"""An official leaderboard, CSV `run,score` (the meta-evaluation's, docs/rubric.md)."""

from __future__ import annotations

import pytest

from submissions.formats.common import CARRIAGE_RETURN, EMPTY_FILE, Problem
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.official_leaderboard import (
    BAD_HEADER,
    BAD_SCORE,
    DUPLICATE_RUN,
    EMPTY_RUN,
    LEADERBOARD_FIELD_COUNT,
    parse_official_leaderboard,
)
from tests.submissions.formats.support import bio

NO_ROWS = Problem(0, "file", EMPTY_FILE.format("run,score line after the header"))


def test_it_reads_runs_and_scores_in_file_order() -> None:
    board = parse_official_leaderboard(
        bio('\ufeff Run , SCORE\r\nWASEDA-R1,0.5\n\n"KYOTO,R1",-2.5e-3\nNII-R1, 7 \n'))
    assert board.problems == []
    assert board.scores == {"WASEDA-R1": 0.5, "KYOTO,R1": -0.0025, "NII-R1": 7.0}


@pytest.mark.parametrize(("line", "problem"), [
    ("WASEDA-R1", Problem(2, "line", LEADERBOARD_FIELD_COUNT.format(1))),
    ("WASEDA-R1,1,2", Problem(2, "line", LEADERBOARD_FIELD_COUNT.format(3))),
    (" ,1", Problem(2, "run", EMPTY_RUN)),
    ("WASEDA-R1,nan", Problem(2, "score", BAD_SCORE.format("nan"))),
    ("WASEDA-R1,inf", Problem(2, "score", BAD_SCORE.format("inf"))),
    ("WASEDA-R1,1e999", Problem(2, "score", BAD_SCORE.format("1e999"))),
    ("WASEDA-R1,1_0", Problem(2, "score", BAD_SCORE.format("1_0"))),
    ("WASEDA-R1,", Problem(2, "score", BAD_SCORE.format(""))),
    ("WASEDA\x00-R1,1", Problem(2, "line", CONTROL_CHARACTER.format(0, 7, NO_CONTROLS_BUT_TAB))),
    ("WASEDA-R1,1\rX", Problem(2, "line", CARRIAGE_RETURN)),
])
def test_a_bad_line_is_named_and_left_out(line: str, problem: Problem) -> None:
    board = parse_official_leaderboard(bio(f"run,score\n{line}\nKYOTO-R1,1\n"))
    assert board.problems == [problem]
    assert board.scores == {"KYOTO-R1": 1.0}


def test_a_run_given_twice_names_its_first_line() -> None:
    board = parse_official_leaderboard(bio("run,score\nA-1,1\nB-1,2\nA-1,3\n"))
    assert board.problems == [Problem(4, "run", DUPLICATE_RUN.format("A-1", 2))]


def test_the_header_must_say_run_score() -> None:
    board = parse_official_leaderboard(bio("system,map\nA-1,1\n"))
    assert board.problems == [Problem(1, "header", BAD_HEADER.format("system,map"))]


@pytest.mark.parametrize("content", ["", "run,score\n", "run,score\n\n"])
def test_a_leaderboard_without_runs_is_refused(content: str) -> None:
    assert NO_ROWS in parse_official_leaderboard(bio(content)).problems
