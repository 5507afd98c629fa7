"""Recomputed numbers held against an archive's: run by run, measure by measure, question by
question, the statistics, the labels' origins, the marked runs and the CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from scoring import archive_format as fmt
from scoring.leaderboard import Statistics, statistics_renamed
from scoring.measures.catalogue import LEGACY_RUBRIC_COVER, ranking_key, rubric_cover_name
from scoring.measures.qrels import derive_pr_qrels
from scoring.measures.stats import BOOTSTRAP_RESAMPLES
from scoring.replay.reading import OFFICIAL, ArchiveReader, marked_records
from scoring.replay.report import Difference, ReplayReport, flat, same
from scoring.track_scores import Tests, TrackScores
from submissions.formats.marked_ac_run import write_marked_ac_run

STATISTICS_DIFFER = ("this software's bootstrap draws {ours} resamples, the archive's "
                     "{theirs}: the intervals are not compared")
OLD_COVER_NAME = ("track {track}: archived when every Rubric-Cover was called {old}; read "
                  "as {new}, its name at the board's cover_k")


def renamed_board(board: dict[str, Any], old: str, new: str) -> dict[str, Any] | None:
    """The board with measure `old` called `new` in its rows, per-question scores and
    statistics; None if it names no `old`, or names `new` already."""
    statistics = board.get("statistics", {})
    named = {*statistics.get("intervals", {}), statistics.get("measure"),
             statistics.get("hsd_measure"), *statistics.get("hsd_more", {}),
             *(key for row in board["rows"] for key in [*row, *row.get("per_question", {})])}
    if old not in named or new in named:
        return None

    def rename(values: Mapping[str, Any]) -> dict[str, Any]:
        return {new if key == old else key: value for key, value in values.items()}

    rows = [rename(row) | ({"per_question": rename(row["per_question"])}
                           if "per_question" in row else {}) for row in board["rows"]]
    return board | {"rows": rows, "statistics": statistics_renamed(statistics, old, new)}


class Replay:
    """One replay of an archive: what it recomputed, and the report it fills."""

    def __init__(self, archive: ArchiveReader, report: ReplayReport) -> None:
        self.archive = archive
        self.report = report
        self.recomputed: dict[str, dict[str, dict[str, Any]]] = {}  # track -> run -> row
        # track -> {archived name: this software's}: the CSV of an older archive names
        # measures as its boards did.
        self.renamed: dict[str, dict[str, str]] = {}
        self.ac_run_ids: set[int] = set()  # the runs of the AC boards: the PR qrels' judgments

    def compare(self, track: str, run: str, measure: str, archived: Any, recomputed: Any,
                question: str | None = None) -> None:
        self.report.numbers += 1
        if not same(archived, recomputed):
            self.report.differences.append(
                Difference(track, run, measure, archived, recomputed, question))

    def compare_rows(self, board: dict[str, Any], scored: TrackScores,
                     incomplete: Mapping[str, int] | None = None) -> None:
        """Aggregates, incomplete counts and per-question scores, run by run."""
        track = board["track"]
        rows: dict[str, dict[str, Any]] = {
            name: {"scores": row.scores, "per_question": row.per_question,
                   "incomplete": (incomplete or {}).get(name, 0)}
            for name, row in scored.rows.items()}
        self.recomputed[track] = rows
        archived_rows = {row["run"]: row for row in board["rows"]}
        for name in sorted(set(archived_rows) | set(rows)):
            archived, ours = archived_rows.get(name), rows.get(name)
            if archived is None or ours is None:
                self.compare(track, name, "row", "present" if archived else "absent",
                             "present" if ours else "absent")
                continue
            measures = (set(archived) | set(ours["scores"])) - {
                "run", "run_id", "team", "incomplete_questions", "per_question"}
            for measure in sorted(measures):
                self.compare(track, name, measure, archived.get(measure),
                             ours["scores"].get(measure))
            self.compare(track, name, "incomplete_questions",
                         archived.get("incomplete_questions", 0), ours["incomplete"])
            theirs_pq = archived.get("per_question", {})
            for measure in sorted(set(theirs_pq) | set(ours["per_question"])):
                a, b = theirs_pq.get(measure), ours["per_question"].get(measure)
                if a is None or b is None:
                    if measure in theirs_pq:  # withheld measures are simply not archived
                        self.compare(track, name, f"per_question {measure}", a, b)
                    continue
                for qid in sorted(set(a) | set(b)):
                    self.compare(track, name, measure, a.get(qid), b.get(qid), question=qid)

    def tests(self, board: dict[str, Any], cover_k: int | None = None) -> Tests:
        """The tests the archived statistics ran (older archives: `measure` alone), with the
        archive's permutations and seed."""
        stored = board.get("statistics", {})
        tested = [stored.get("hsd_measure") or stored.get("measure")
                  or ranking_key(board["kind"], cover_k), *stored.get("hsd_more", {})]
        return Tests(tested=tested, permutations=self.archive.permutations,
                     seed=self.archive.seed)

    def compare_statistics(self, board: dict[str, Any], recomputed: Statistics) -> None:
        stored = board.get("statistics", {})
        statistics = recomputed.as_json()
        if "hsd_measure" not in stored:
            statistics.pop("hsd_measure", None)
        same_bootstrap = self.archive.resamples == BOOTSTRAP_RESAMPLES
        if not same_bootstrap:
            self.report.notes.append(STATISTICS_DIFFER.format(
                ours=BOOTSTRAP_RESAMPLES, theirs=self.archive.resamples))
        archived = dict(flat(stored))
        ours = dict(flat(statistics))
        for path in sorted(set(archived) | set(ours)):
            if not same_bootstrap and path.startswith(("ci.", "intervals.", "interval_method")):
                continue
            self.compare(board["track"], "-", f"statistics.{path}", archived.get(path),
                         ours.get(path))

    def check_labels(self, board: dict[str, Any], run_ids: set[int]) -> None:
        """How a board's labels were decided, per kind, from the archived judgments of
        `run_ids`: by people (edited), accepted (at or above the guarantee's threshold),
        by the judge alone (the rest)."""
        origins = board.get("labels") or {}
        counted: dict[str, dict[str, int]] = {}
        for judgment in self.archive.jsonl(fmt.JUDGMENTS):
            kind = judgment["kind"]
            if kind not in origins or not any(
                    use.get("slot") == OFFICIAL and use.get("run_id") in run_ids
                    for use in judgment.get("uses", [])):
                continue
            counts = counted.setdefault(kind, {"judgments": 0, "accepted": 0, "by_people": 0,
                                               "by_second_judge": 0, "by_judge": 0})
            counts["judgments"] += 1
            threshold = (origins[kind].get("guarantee") or {}).get("threshold")
            sure = judgment.get("calibrated_confidence")
            sure = judgment.get("confidence") if sure is None else sure
            if judgment.get("edited_label") is not None:
                second = judgment.get("decided_by_second_judge", False)
                counts["by_second_judge" if second else "by_people"] += 1
            elif threshold is not None and (sure or 0.0) >= threshold:
                counts["accepted"] += 1
            else:
                counts["by_judge"] += 1
        for kind, origin in sorted(origins.items()):
            for count in ("judgments", "accepted", "by_people", "by_second_judge", "by_judge"):
                self.compare(board["track"], "-", f"labels.{kind}.{count}", origin.get(count),
                             counted.get(kind, {}).get(count, 0))

    def derived_qrels(self) -> dict[str, dict[str, int]]:
        """The PR qrels from every AC run the campaign's qrels read (runs.jsonl says
        which: scoring.selectors.graded_ac_runs when the archive was written)."""
        marked = []
        for run_id, run in sorted(self.archive.runs.items()):
            if run.get("in_qrels"):
                answers, marks = self.archive.ac_blocks(run_id)
                marked.append([nugget for record, block in zip(
                    marked_records(answers, marks), marks, strict=True) if block.complete
                    for nugget in record.nuggets])
        return derive_pr_qrels(marked)

    def current_names(self, board: dict[str, Any], cover_k: int) -> dict[str, Any]:
        """A RUBRIC board as this software names its measures: an archive written when every
        Rubric-Cover was rubric_cover@10 has its Rubric-Cover read under its cover_k's name."""
        track, name = board["track"], rubric_cover_name(cover_k)
        renamed = renamed_board(board, LEGACY_RUBRIC_COVER, name)
        if renamed is None:
            return board
        self.renamed[track] = {LEGACY_RUBRIC_COVER: name}
        self.report.notes.append(OLD_COVER_NAME.format(track=track, old=LEGACY_RUBRIC_COVER,
                                                       new=name))
        return renamed

    def check_marked_runs(self) -> None:
        """Each archived marked run against the marks the judgments give its file."""
        current = {run["name"]: run_id for run_id, run in self.archive.runs.items()
                   if run["kind"] == "ac" and run["is_current"] and run["member"]}
        for member in sorted(self.archive.manifest.members):
            if not (member.startswith("marked/") and member.endswith(".marked")):
                continue
            name = member.removeprefix("marked/").removesuffix(".marked")
            if name not in current:
                continue
            out = io.StringIO()
            write_marked_ac_run(marked_records(*self.archive.ac_blocks(current[name])), out)
            self.compare("ac", name, "marked run", "as archived" if out.getvalue() ==
                         self.archive.text(member) else "differs", "as archived")

    def check_csv(self) -> None:
        """The CSV's numbers against the recomputed rows (it is written from the same
        snapshots as the JSON)."""
        if fmt.LEADERBOARDS_CSV not in self.archive.manifest.members:
            return
        for row in csv.DictReader(io.StringIO(self.archive.text(fmt.LEADERBOARDS_CSV))):
            ours = self.recomputed.get(row["track"], {}).get(row["run"])
            if ours is None:
                continue
            renamed = self.renamed.get(row["track"], {})
            for column, value in row.items():
                measure = renamed.get(column, column)
                if measure in ours["scores"] and value != "":
                    self.compare(row["track"], row["run"], f"{measure} (csv)", float(value),
                                 ours["scores"][measure])
