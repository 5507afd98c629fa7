"""`python -m scoring.replay ARCHIVE.zip`: check a results archive against its manifest,
recompute every published number from it alone (no Django, no database) and print each
difference; exit 0 all match, 1 some differ, 2 unreadable (docs/results.md, "Replay")."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from grading.llm.rubric import UNPARSED_GRADE
from scoring import archive_format as fmt
from scoring.leaderboard import snapshot_cover_k, statistics_renamed
from scoring.measures import JudgedAnswer, score_ac_track, score_pr_track
from scoring.measures.catalogue import (
    HSD_PERMUTATIONS,
    HSD_SEED,
    LEGACY_RUBRIC_COVER,
    cover_k_of,
    ranking_key,
    rubric_cover_name,
)
from scoring.measures.qrels import derive_pr_qrels
from scoring.measures.rubric import pooled_cover, rubric_qrels, score_rubric_run
from scoring.measures.stats import BOOTSTRAP_RESAMPLES
from scoring.recompute import add_extra_measures, snapshot_statistics
from submissions.formats.ac_run import AnswerRecord, parse_ac_run
from submissions.formats.marked_ac_run import MarkedAnswerRecord, block_marks, write_marked_ac_run
from submissions.formats.pr_run import parse_pr_run
from submissions.formats.response_run import parse_response_run, response_passages
from submissions.formats.trec_run import parse_trec_run

#: Two floats this close are the same number: the replay runs the same code on the same
#: inputs, so only a different BLAS summing in another order may move the last bits.
REL_TOL = 1e-9
ABS_TOL = 1e-12
#: A run file was checked against the campaign's limits when it was accepted; the
#: replay reads it whatever the limits are now.
NO_LIMIT = sys.maxsize
OFFICIAL = "official"

PUBLIC_ARCHIVE = ("a public archive holds no judgments: its manifest is verified; no number "
                  "can be recomputed from it (the organisers' full archive can)")
NO_LEADERBOARDS = "the archive holds no published leaderboard: nothing to recompute"
STATISTICS_DIFFER = ("this software's bootstrap draws {ours} resamples, the archive's "
                     "{theirs}: the intervals are not compared")
OLD_COVER_NAME = ("track {track}: archived when every Rubric-Cover was called {old}; read "
                  "as {new}, its name at the board's cover_k")


@dataclass(frozen=True)
class Difference:
    """One number that the archive and the replay disagree on."""

    track: str
    run: str  # "-" for a track-wide number (statistics, qrels)
    measure: str
    archived: Any
    recomputed: Any
    question: str | None = None

    def __str__(self) -> str:
        where = f" question {self.question}" if self.question is not None else ""
        return (f"track {self.track} run {self.run} {self.measure}{where}: archived "
                f"{self.archived!r}, recomputed {self.recomputed!r}")


@dataclass
class ReplayReport:
    manifest_problems: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    numbers: int = 0  # how many archived numbers were compared
    leaderboards: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.manifest_problems and not self.differences


def _same(archived: Any, recomputed: Any) -> bool:
    if isinstance(archived, bool) or isinstance(recomputed, bool):
        return archived == recomputed
    if isinstance(archived, int | float) and isinstance(recomputed, int | float):
        return math.isclose(archived, recomputed, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return bool(archived == recomputed)


def _flat(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """A JSON value's leaves by path; the HSD's list of pairs keyed by its runs."""
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from _flat(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and all(isinstance(v, Mapping) and "a" in v and "b" in v
                                         for v in value) and value:
        for pair in value:
            yield from _flat({k: v for k, v in pair.items() if k not in ("a", "b")},
                             f"{prefix}[{pair['a']} vs {pair['b']}]")
    else:
        yield prefix, value


def _renamed(board: dict[str, Any], old: str, new: str) -> dict[str, Any] | None:
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


class _Archive:
    """The archive's members as the replay reads them."""

    def __init__(self, archive: zipfile.ZipFile, manifest: fmt.Manifest) -> None:
        self.zip = archive
        self.manifest = manifest
        software = self.json(fmt.SOFTWARE) if fmt.SOFTWARE in manifest.members else {}
        statistics = software.get("statistics", {})
        self.seed = int(statistics.get("seed", HSD_SEED))
        self.permutations = int(statistics.get("hsd_permutations", HSD_PERMUTATIONS))
        self.resamples = int(statistics.get("bootstrap_resamples", BOOTSTRAP_RESAMPLES))
        self.qids = [line.split(";", 1)[0] for line in self.text(fmt.QUESTIONS).splitlines()
                     if line]
        self.runs = {run["id"]: run for run in self.jsonl(fmt.RUNS)}
        self._labels_read = False
        self.entailed: dict[tuple[int, str, int], bool | None] = {}
        self.verdicts: dict[tuple[int, str], dict[str, Any] | None] = {}
        self.grade_uses: list[tuple[str, str, str, str, int]] = []
        self._blocks: dict[int, tuple[list[AnswerRecord], list[Any]]] = {}

    def text(self, member: str) -> str:
        return self.zip.read(member).decode("utf-8")

    def json(self, member: str) -> Any:
        return json.loads(self.zip.read(member))

    def jsonl(self, member: str) -> Iterator[Any]:
        with self.zip.open(member) as raw:
            for line in io.TextIOWrapper(raw, encoding="utf-8"):
                if line.strip():
                    yield json.loads(line)

    def read_labels(self) -> None:
        """Every official label the judgments give, by where it is used. The label that
        counts is an organiser's edit if any, else the judge's."""
        if self._labels_read:
            return
        self._labels_read = True
        for judgment in self.jsonl(fmt.JUDGMENTS):
            edited = judgment.get("edited_label")
            label = edited if edited is not None else judgment.get("llm_label")
            for use in judgment.get("uses", []):
                if judgment["kind"] == "rubric":
                    # A reply that never parsed counts as UNPARSED_GRADE until an organiser
                    # grades it (grading.selectors.counted_grade).
                    grade = UNPARSED_GRADE if label is None else int(label["grade"])
                    self.grade_uses.append((use["qid"], use["docid"], use["item_id"],
                                            use["item_text_hash"], grade))
                elif use.get("slot") != OFFICIAL:
                    continue
                elif judgment["kind"] == "entailment":
                    key = (use["run_id"], use["qid"], use["nugget_num"])
                    self.entailed[key] = None if label is None else bool(label["entailed"])
                elif judgment["kind"] == "answer":
                    self.verdicts[use["run_id"], use["qid"]] = label

    def run_file(self, run_id: int) -> IO[bytes]:
        member = self.runs[run_id]["member"]
        if member is None:
            raise KeyError(f"run {run_id} has no file in the archive")
        return self.zip.open(member)

    def ac_blocks(self, run_id: int) -> tuple[list[AnswerRecord], list[Any]]:
        """An AC run's answers (by qid) and each one's marks, from its file and the
        judgments (`block_marks`, the rule grading.selectors.marked_run uses too)."""
        if run_id not in self._blocks:
            self.read_labels()
            with self.run_file(run_id) as file:
                parsed = parse_ac_run(file, max_answer_chars=NO_LIMIT)
            answers = sorted(parsed.records, key=lambda answer: answer.qid)
            marks = []
            for answer in answers:
                nuggets = sorted(answer.nuggets, key=lambda nugget: nugget.nugget_num)
                marks.append(block_marks(
                    nugget_nums=[n.nugget_num for n in nuggets],
                    entailed={n.nugget_num: self.entailed.get((run_id, answer.qid,
                                                                n.nugget_num))
                              for n in nuggets},
                    verdict=self.verdicts.get((run_id, answer.qid))))
            self._blocks[run_id] = (answers, marks)
        return self._blocks[run_id]


def _judged_answers(answers: Sequence[AnswerRecord], marks: Sequence[Any]
                    ) -> tuple[dict[str, JudgedAnswer], int]:
    """As scoring.services scores them: complete blocks only; the rest are counted."""
    judged, incomplete = {}, 0
    for answer, block in zip(answers, marks, strict=True):
        if not block.complete or block.correct is None:
            incomplete += 1
            continue
        judged[answer.qid] = JudgedAnswer(correct=block.correct, confidence=answer.confidence,
                                          marks=block.marks)
    return judged, incomplete


def _marked_records(answers: Sequence[AnswerRecord], marks: Sequence[Any]
                    ) -> list[MarkedAnswerRecord]:
    return [MarkedAnswerRecord.from_answer(
        answer, dict(zip(sorted(n.nugget_num for n in answer.nuggets), block.marks,
                         strict=True))) for answer, block in zip(answers, marks, strict=True)]


class Replay:
    def __init__(self, archive: _Archive, report: ReplayReport) -> None:
        self.archive = archive
        self.report = report
        self.recomputed: dict[str, dict[str, dict[str, Any]]] = {}  # track -> run -> row
        # track -> {archived name: this software's}: the CSV of an older archive names
        # measures as its boards did.
        self.renamed: dict[str, dict[str, str]] = {}

    def compare(self, track: str, run: str, measure: str, archived: Any, recomputed: Any,
                question: str | None = None) -> None:
        self.report.numbers += 1
        if not _same(archived, recomputed):
            self.report.differences.append(
                Difference(track, run, measure, archived, recomputed, question))

    def compare_rows(self, board: dict[str, Any], rows: dict[str, dict[str, Any]]) -> None:
        """Aggregates, incomplete counts and per-question scores, run by run."""
        track = board["track"]
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

    def compare_statistics(self, board: dict[str, Any], kind: str, names: list[str],
                           qids: list[str], cover_k: int | None = None) -> None:
        rows = self.recomputed[board["track"]]
        stored = board.get("statistics", {})
        # The measures the archived tests were on (older archives: `measure` alone).
        tested = [stored.get("hsd_measure") or stored.get("measure")
                  or ranking_key(kind, cover_k), *stored.get("hsd_more", {})]
        statistics = snapshot_statistics(
            kind, names, qids, [rows[name]["per_question"] for name in names],
            n_permutations=self.archive.permutations, seed=self.archive.seed,
            tested=tested, cover_k=cover_k).as_json()
        if "hsd_measure" not in stored:
            statistics.pop("hsd_measure", None)
        same_bootstrap = self.archive.resamples == BOOTSTRAP_RESAMPLES
        if not same_bootstrap:
            self.report.notes.append(STATISTICS_DIFFER.format(
                ours=BOOTSTRAP_RESAMPLES, theirs=self.archive.resamples))
        archived = dict(_flat(board.get("statistics", {})))
        ours = dict(_flat(statistics))
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

    # --- one track kind each ---------------------------------------------------------

    def replay_ac(self, board: dict[str, Any]) -> None:
        archive = self.archive
        ids = {row["run"]: row["run_id"] for row in board["rows"]}
        names = sorted(ids)
        answers_of, incomplete_of = {}, {}
        for name in names:
            answers_of[name], incomplete_of[name] = _judged_answers(*archive.ac_blocks(ids[name]))
        scores = score_ac_track(qids=archive.qids, runs=answers_of) if names else {}
        rows = {}
        for name in names:
            aggregates, per_question = scores[name].leaderboard_row(), scores[name].per_question()
            add_extra_measures("ac", aggregates, per_question, qids=archive.qids,
                               answers=answers_of[name])
            rows[name] = {"scores": aggregates, "per_question": per_question,
                          "incomplete": incomplete_of[name]}
        self.compare_rows(board, rows)
        self.compare(board["track"], "-", "questions", board.get("questions"),
                     len(archive.qids))
        self.compare_statistics(board, "ac", names, archive.qids)

    def derived_qrels(self) -> dict[str, dict[str, int]]:
        """The PR qrels from every AC run the campaign's qrels read (runs.jsonl says
        which: scoring.selectors.graded_ac_runs when the archive was written)."""
        marked = []
        for run_id, run in sorted(self.archive.runs.items()):
            if run.get("in_qrels"):
                answers, marks = self.archive.ac_blocks(run_id)
                marked.append([nugget for record, block in zip(
                    _marked_records(answers, marks), marks, strict=True) if block.complete
                    for nugget in record.nuggets])
        return derive_pr_qrels(marked)

    def replay_pr(self, board: dict[str, Any]) -> None:
        track, archive = board["track"], self.archive
        qrels = self.derived_qrels()
        if board.get("qrels"):
            stored: dict[str, dict[str, int]] = {}
            for line in archive.text(board["qrels"]).splitlines():
                qid, key, grade = line.split()
                stored.setdefault(qid, {})[key] = int(grade)
            for qid in sorted(set(stored) | set(qrels)):
                for key in sorted(set(stored.get(qid, {})) | set(qrels.get(qid, {}))):
                    self.compare(track, key.rsplit(":", 1)[0], f"qrels {key}",
                                 stored.get(qid, {}).get(key), qrels.get(qid, {}).get(key),
                                 question=qid)
        ids = {row["run"]: row["run_id"] for row in board["rows"]}
        names = sorted(ids)
        rankings_of = {}
        for name in names:
            with archive.run_file(ids[name]) as file:
                records = parse_pr_run(file, max_passage_chars=NO_LIMIT).records
            rankings: dict[str, list[tuple[int, str]]] = {}
            for record in records:
                rankings.setdefault(record.qid, []).append((record.rank, f"{name}:{record.rank}"))
            rankings_of[name] = {qid: [key for _, key in sorted(ranked)]
                                 for qid, ranked in rankings.items()}
        scores = score_pr_track(qrels=qrels, runs=rankings_of) if qrels and names else {}
        rows = {}
        for name in names:
            aggregates: dict[str, float] = {}
            per_question: dict[str, dict[str, float]] = {}
            if qrels:
                aggregates = scores[name].leaderboard_row()
                per_question = scores[name].per_question()
                add_extra_measures("pr", aggregates, per_question, qrels=qrels,
                                   rankings=rankings_of[name])
            rows[name] = {"scores": aggregates, "per_question": per_question, "incomplete": 0}
        self.compare_rows(board, rows)
        self.compare_statistics(board, "pr", names, sorted(qrels))

    def current_names(self, board: dict[str, Any], cover_k: int) -> dict[str, Any]:
        """A RUBRIC board as this software names its measures: an archive written when every
        Rubric-Cover was rubric_cover@10 has its Rubric-Cover read under its cover_k's name."""
        track, name = board["track"], rubric_cover_name(cover_k)
        renamed = _renamed(board, LEGACY_RUBRIC_COVER, name)
        if renamed is None:
            return board
        self.renamed[track] = {LEGACY_RUBRIC_COVER: name}
        self.report.notes.append(OLD_COVER_NAME.format(track=track, old=LEGACY_RUBRIC_COVER,
                                                       new=name))
        return renamed

    def replay_rubric(self, board: dict[str, Any]) -> None:
        track, kind, archive = board["track"], board["kind"], self.archive
        min_grade, label = int(board["min_grade"]), str(board["label"])
        # Rubric-Cover's key carries cover_k; its value is computed at k (a response: all).
        cover_k, depth = snapshot_cover_k(board), int(board["depth"])
        k = cover_k_of(kind, cover_k)
        board = self.current_names(board, cover_k)
        archive.read_labels()
        items: dict[str, list[str]] = {}
        text_hash: dict[str, str] = {}
        for item in archive.jsonl(fmt.TEST_BANK_ITEMS):
            if item["status"] != "retired":
                items.setdefault(item["qid"], []).append(item["item_id"])
                text_hash[item["item_id"]] = item["text_hash"]
        ids = {row["run"]: row["run_id"] for row in board["rows"]}
        names = sorted(ids)
        rankings_of: dict[str, dict[str, list[str]]] = {}
        pool: dict[str, set[str]] = {}
        for name in names:
            with archive.run_file(ids[name]) as file:
                if kind == "ranking":
                    rankings = parse_trec_run(file).docids()
                    graded = {qid: docids[:depth] for qid, docids in rankings.items()}
                else:
                    rankings = {}
                    for record in parse_response_run(file).records:
                        rankings[record.qid] = [p.docid for p in response_passages(name, record)]
                    graded = rankings
            rankings_of[name] = rankings
            for qid, docids in graded.items():
                pool.setdefault(qid, set()).update(docids)
        grades: dict[str, dict[str, dict[str, int]]] = {}
        for qid, docid, item_id, graded_hash, grade in archive.grade_uses:
            # Fresh grades only (the item's text unchanged since), of current items, of
            # passages this track's pool holds (scoring.rubric_selectors.rubric_track).
            if text_hash.get(item_id) == graded_hash and docid in pool.get(qid, ()) \
                    and item_id in items.get(qid, ()):
                grades.setdefault(qid, {}).setdefault(docid, {})[item_id] = grade
        qrels = rubric_qrels(grades, label=label, min_grade=min_grade)
        pooled = pooled_cover(runs=[rankings_of[name] for name in names], grades=grades,
                              items=items, k=k, min_grade=min_grade)
        rows = {}
        for name in names:
            scores = score_rubric_run(rankings=rankings_of[name], grades=grades, items=items,
                                      qrels=qrels, pooled=pooled, min_grade=min_grade,
                                      cover_k=k, name_k=cover_k)
            aggregates, per_question = scores.leaderboard_row(), scores.per_question()
            add_extra_measures(kind, aggregates, per_question, name_k=cover_k,
                               rankings=rankings_of[name], grades=grades, items=items,
                               qrels=qrels, min_grade=min_grade, cover_k=k)
            rows[name] = {"scores": aggregates, "per_question": per_question, "incomplete": 0}
        if board.get("qrels"):
            stored: dict[str, dict[str, int]] = {}
            for line in archive.text(board["qrels"]).splitlines():
                qid, _, docid, level = line.split()
                stored.setdefault(qid, {})[docid] = int(level)
            for qid in sorted(set(stored) | set(qrels)):
                for docid in sorted(set(stored.get(qid, {})) | set(qrels.get(qid, {}))):
                    self.compare(track, "-", f"qrels {docid}", stored.get(qid, {}).get(docid),
                                 qrels.get(qid, {}).get(docid), question=qid)
        self.compare_rows(board, rows)
        qids = sorted(qid for qid, bank in items.items() if bank)
        self.compare_statistics(board, kind, names, qids, cover_k)

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
            write_marked_ac_run(_marked_records(*self.archive.ac_blocks(current[name])), out)
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


def replay_archive(path: str) -> ReplayReport:
    """Verify the archive at `path` and recompute its published numbers (see above)."""
    report = ReplayReport()
    with zipfile.ZipFile(path) as archive:
        if fmt.MANIFEST not in archive.namelist():
            report.manifest_problems.append(fmt.NO_MANIFEST)
            return report
        try:
            manifest = fmt.read_manifest(archive)
        except fmt.ManifestUnreadable as unreadable:
            report.manifest_problems.append(str(unreadable))
            return report
        if manifest.format != fmt.FORMAT:
            report.manifest_problems.append(fmt.BAD_FORMAT.format(found=manifest.format,
                                                                  expected=fmt.FORMAT))
            return report
        report.manifest_problems.extend(fmt.manifest_problems(archive, manifest))
        if report.manifest_problems:
            return report
        if manifest.scope != fmt.SCOPE_FULL:
            report.notes.append(PUBLIC_ARCHIVE)
            return report
        replay = Replay(_Archive(archive, manifest), report)
        boards = [replay.archive.json(member) for member in sorted(manifest.members)
                  if member.startswith("leaderboards/") and member.endswith(".json")]
        if not boards:
            report.notes.append(NO_LEADERBOARDS)
        ac_runs = {row["run_id"] for board in boards if board["kind"] == "ac"
                   for row in board["rows"]}
        for board in boards:
            report.leaderboards.append(board["track"])
            if board.get("stale"):
                report.notes.append(f"track {board['track']}: archived as stale (computed "
                                    f"before the latest judgment edit): expect differences")
            if board["kind"] == "ac":
                replay.replay_ac(board)
                replay.check_labels(board, {row["run_id"] for row in board["rows"]})
            elif board["kind"] == "pr":
                replay.replay_pr(board)
                replay.check_labels(board, ac_runs)
            else:
                replay.replay_rubric(board)
        replay.check_marked_runs()
        replay.check_csv()
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scoring.replay",
        description="Verify a results archive and recompute every published number.")
    parser.add_argument("archive", help="the .zip written by manage.py export_campaign")
    args = parser.parse_args(argv)
    try:
        report = replay_archive(args.archive)
    except (OSError, zipfile.BadZipFile) as error:
        print(f"error: {args.archive}: {error}", file=sys.stderr)
        return 2
    for problem in report.manifest_problems:
        print(f"MANIFEST {problem}")
    for difference in report.differences:
        print(f"DIFFERS {difference}")
    for note in report.notes:
        print(f"note: {note}")
    if report.manifest_problems:
        print(f"{len(report.manifest_problems)} member(s) fail the manifest: nothing recomputed")
    elif report.differences:
        print(f"{len(report.differences)} of {report.numbers} number(s) differ "
              f"({', '.join(report.leaderboards)})")
    else:
        print(f"all {report.numbers} number(s) of {len(report.leaderboards)} leaderboard(s) "
              f"match ({', '.join(report.leaderboards) or 'none'})")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
