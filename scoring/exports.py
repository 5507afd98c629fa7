"""Organiser exports: leaderboard CSV and LaTeX tables, qrels (derived PR qrels and
Rubric-Qrels), res files, marked runs, graded passages in the workbench's JSONL."""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterable, Iterator
from typing import get_args

from grading.selectors import marked_run
from scoring.leaderboard import SIGNIFICANCE_LEVEL, Leaderboard
from scoring.measures import pr_qrels_lines
from scoring.measures.catalogue import HSD_PERMUTATIONS, Kind, measures_of_tracks
from scoring.measures.rubric import DEFAULT_COVER_K, rubric_qrels_lines
from scoring.rubric_selectors import RubricTrack, graded_paragraphs
from scoring.workbench import workbench_line
from submissions.formats.marked_ac_run import write_marked_ac_run
from submissions.models import PassageRecord, Run


def leaderboards_csv(boards: Iterable[Leaderboard]) -> str:
    """One CSV, a row per (track, run), full precision: the measures of the boards exported
    (a shared key once; with none, every kind's), then computed_at, the judge and a RUBRIC
    snapshot's settings (docs/results.md, "Exports")."""
    boards = list(boards)
    tracks = [(board.kind, board.cover_k) for board in boards] or [
        (kind, DEFAULT_COVER_K) for kind in get_args(Kind)]
    keys = [m.key for m in measures_of_tracks(tracks)]
    params = list(dict.fromkeys(key for board in boards for key in board.params))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["track", "run", "team", *keys, "computed_at", "judge", *params])
    for board in boards:
        for row in board.rows:
            writer.writerow([board.track, row.run, row.team,
                             *["" if (value := row.score(k)) is None else value for k in keys],
                             board.computed_at.isoformat(), board.judge,
                             *["" if (value := board.params.get(k)) is None else value
                               for k in params]])
    return out.getvalue()


def _latex_escape(text: str) -> str:
    for char, escaped in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"),
                          ("$", r"\$"), ("#", r"\#"), ("_", r"\_"), ("{", r"\{"),
                          ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        text = text.replace(char, escaped)
    return text


def leaderboard_latex(board: Leaderboard) -> str:
    """A LaTeX table for an overview paper, runs ranked; a run's last column lists the
    runs it beats significantly (randomised Tukey HSD, B = 5000, p < 0.05)."""
    measures = board.measures()
    number = {row.run: index for index, row in enumerate(board.rows, 1)}
    beats: dict[str, list[int]] = {row.run: [] for row in board.rows}
    statistics = board.statistics
    for pair in statistics.hsd:
        if pair.p_value < SIGNIFICANCE_LEVEL and pair.a in number and pair.b in number:
            winner, loser = (pair.a, pair.b) if pair.difference > 0 else (pair.b, pair.a)
            beats[winner].append(number[loser])
    header = " & ".join(["\\#", "Run", *[_latex_escape(m.label) for m in measures],
                         "$>$ (HSD)"])
    settings = "".join(f"; {_latex_escape(key)} = {_latex_escape(str(value))}"
                       for key, value in board.params.items() if value is not None)
    if board.value_k is None and board.params:  # a response's, named by cover_k all the same
        settings += "; Rubric-Cover over all segments"
    lines = [
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{_latex_escape(board.track.upper())} runs ({_latex_escape(board.judge)}"
        f"{settings}). Last column: runs significantly worse in "
        f"{_latex_escape(board.label_of(statistics.tested))} "
        f"(randomised Tukey HSD, B = {statistics.hsd_permutations or HSD_PERMUTATIONS}, "
        f"$p < {SIGNIFICANCE_LEVEL}$).}}",
        f"\\label{{tab:{board.track}}}",
        "\\begin{tabular}{rl" + "r" * len(measures) + "l}",
        "\\hline",
        header + " \\\\",
        "\\hline",
    ]
    for row in board.rows:
        cells = [str(number[row.run]), _latex_escape(row.run)]
        cells += ["--" if (value := row.score(m.key)) is None else f"{value:.4f}"
                  for m in measures]
        cells.append(", ".join(str(n) for n in sorted(beats[row.run])) or "--")
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)


def qrels_text(qrels: dict[str, dict[str, int]]) -> str:
    lines = pr_qrels_lines(qrels)
    return "\n".join(lines) + ("\n" if lines else "")


def rubric_qrels_text(qrels: dict[str, dict[str, int]]) -> str:
    """Rubric-Qrels as a trec_eval qrels file: `qid 0 docid label`, label 0 included."""
    lines = rubric_qrels_lines(qrels)
    return "\n".join(lines) + ("\n" if lines else "")


def graded_jsonl(data: RubricTrack) -> Iterator[str]:
    """The track's graded pool in the Autograding Workbench's JSONL data model
    (scoring/workbench.py), one query a line, read and written a query at a time so
    that a large pool is streamed rather than held."""
    for qid in sorted(data.pool):
        yield workbench_line(qid, graded_paragraphs(data=data, qid=qid),
                             min_grade=data.track.min_grade)


def res_zip(runs: Iterable[Run]) -> bytes:
    """A res file per PR run: its PassageKeys in rank order, trec_eval run format."""
    from submissions.formats.pr_run import PassageRecord as PassageLine
    from submissions.formats.res import write_pr_res

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for run in runs:
            out = io.StringIO()
            records = [PassageLine(qid, rank, doc_id, "")
                       for qid, rank, doc_id in PassageRecord.objects.filter(run=run)
                       .order_by("qid", "rank").values_list("qid", "rank", "doc_id")]
            write_pr_res(records, run.name, out)
            archive.writestr(f"{run.name}.res", out.getvalue())
    return buffer.getvalue()


def marked_runs_zip(runs: Iterable[Run]) -> bytes:
    """Every marked AC run, with each answer's verdict in a companion TSV."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for run in runs:
            blocks = marked_run(run=run)
            out = io.StringIO()
            write_marked_ac_run([b.marked for b in blocks], out)
            archive.writestr(f"{run.name}.marked", out.getvalue())
            verdicts = "qid\tcorrect\n" + "".join(
                f"{b.marked.qid}\t{'' if b.correct is None else int(b.correct)}\n"
                for b in blocks)
            archive.writestr(f"{run.name}.answers.tsv", verdicts)
    return buffer.getvalue()
