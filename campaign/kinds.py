"""The track kinds, one entry each: how its runs are named and stored, whether and how they are
graded, how they are scored and archived (docs/architecture.md, "Track kinds"). Pure, so the
archive's replay reads it too; what a higher layer does is named by dotted path."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal


@dataclass(frozen=True)
class Kind:
    """What one kind of track is: facts the layers ask, and its behaviour by dotted path."""

    value: str
    rubric: bool  # RUBRIC family: a deadline of its own, the test bank, its answer checks
    graded: bool  # the LLM judge grades its runs (a PR run is scored, never graded)
    shared: bool  # its runs are shared with every team after its deadline, for citing
    answers: bool  # its runs answer with nuggets: the R2C2 pipeline, marked runs, qrels
    ranked: bool  # graded on its top `depth` and covered at `cover_k`, not on every segment
    in_parts: bool  # a large run is graded in chunks of whole questions, by any workers
    second_judge: bool  # a second judge may label its runs, for agreement
    due: Literal["pr_due", "ac_due", "own"]  # the campaign's deadline it keeps, or its own
    noun: str  # what its runs are called, before "run(s)": "PR", "ranking"
    run_names: str  # the pattern of its run names, as the forms and refusals explain them
    file_format: str  # the format its files are in, where the forms name it
    questions: str  # what its topics are called on a run's page: "questions", "queries"
    records: str  # what a run of it holds: "passages", "nuggets", "segments"
    scored_on: str  # which questions its leaderboard's means are over, as its page says
    team_of: str  # (track, run name) -> its team, or RunRefused saying what was expected
    store: str  # submissions.stores.Storing -> problems: reads and stores a run's file
    grader: str  # grades (some questions of) a claimed run; "" for a kind never graded
    scorer: str  # scores one of its tracks into a snapshot (scoring.track_scoring)
    archive: str  # the qrels file the results archive keeps of its boards, if any
    replay: str  # recomputes one of its boards from an archive alone (scoring.replay)


KINDS: dict[str, Kind] = {}
_FIELDS = frozenset(f.name for f in fields(Kind))


def register(kind: Kind) -> None:
    """Add a kind (or replace the one of its value): every layer then finds it here."""
    KINDS[kind.value] = kind


def kind_of(value: str) -> Kind:
    """The entry of kind `value` (KeyError for a kind no one registered)."""
    return KINDS[value]


def with_article(noun: str) -> str:
    """'a PR run', 'an AC run': the article as the noun is read aloud."""
    return f"{'an' if noun[:1].upper() in 'AEIOU' else 'a'} {noun}"


def kinds(**facts: bool) -> list[str]:
    """The kinds, in registration order, whose facts are as given: kinds(graded=True)."""
    if unknown := set(facts) - _FIELDS:
        raise TypeError(f"no such fact of a kind: {', '.join(sorted(unknown))}")
    return [k.value for k in KINDS.values()
            if all(getattr(k, name) == value for name, value in facts.items())]


def behaviour(path: str) -> Callable[..., Any]:
    """The function a kind names by `path` (its module is imported once, by Python)."""
    module, _, name = path.rpartition(".")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


R2C2_NAMES = "submissions.checks.r2c2_run_team"
RUBRIC_NAMES = "submissions.checks.rubric_run_team"
RUBRIC_GRADER = "grading.rubric.grades.grade_rubric_part"
RUBRIC_SCORER = "scoring.track_scoring.rubric_track_scored"
RUBRIC_SCORED_ON = "queries with test-bank items"
for _kind in (
    Kind("pr", rubric=False, graded=False, shared=True, answers=False, ranked=True,
         in_parts=False, second_judge=False, due="pr_due",
         noun="PR", run_names="[Team]-PG-[n] or [Team]-PO-[n]", file_format="",
         questions="questions", records="passages",
         scored_on="questions with a relevant passage in the derived qrels", team_of=R2C2_NAMES,
         store="submissions.stores.pr_run", grader="",
         scorer="scoring.track_scoring.pr_track", archive="scoring.archive_tracks.pr_track",
         replay="scoring.replay.boards.pr_board"),
    Kind("ac", rubric=False, graded=True, shared=False, answers=True, ranked=False,
         in_parts=True, second_judge=True, due="ac_due",
         noun="AC", run_names="[Team]-AC-[n]", file_format="", questions="questions",
         records="nuggets", scored_on="", team_of=R2C2_NAMES,
         store="submissions.stores.ac_run", grader="grading.r2c2.parts.grade_ac_part",
         scorer="scoring.track_scoring.ac_track", archive="scoring.archive_tracks.ac_track",
         replay="scoring.replay.boards.ac_board"),
    Kind("ranking", rubric=True, graded=True, shared=False, answers=False, ranked=True,
         in_parts=False, second_judge=False, due="own",
         noun="ranking", run_names="[Team]-[label]", file_format="TREC format",
         questions="queries", records="passages", scored_on=RUBRIC_SCORED_ON,
         team_of=RUBRIC_NAMES,
         store="submissions.stores.ranking_run", grader=RUBRIC_GRADER,
         scorer=RUBRIC_SCORER, archive="scoring.archive_tracks.rubric_track",
         replay="scoring.replay.boards.rubric_board"),
    Kind("response", rubric=True, graded=True, shared=False, answers=False, ranked=False,
         in_parts=False, second_judge=False, due="own",
         noun="response", run_names="[Team]-[label]", file_format="JSONL",
         questions="queries", records="segments", scored_on=RUBRIC_SCORED_ON,
         team_of=RUBRIC_NAMES,
         store="submissions.stores.response_run", grader=RUBRIC_GRADER,
         scorer=RUBRIC_SCORER, archive="scoring.archive_tracks.rubric_track",
         replay="scoring.replay.boards.rubric_board"),
):
    register(_kind)
