"""Every ranking measure of every PR run of a track at once, on question x run x rank gain
arrays in batches of about `BATCH_CELLS` cells; equal to `score_pr_run` to 1e-12 (the
formulas are `ranking`'s; docs/measures.md)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import TypeVar

import numpy as np

from .common import DUPLICATE_DOCUMENT, Qrels, QuestionScores, Rankings, relevant_questions
from .ranking import (
    BAD_BETA,
    DEFAULT_CUTOFFS,
    FloatArray,
    PrRunScores,
    checked_max_gain,
    dcg_rows,
    err_rows,
    ideal_gains,
    q_measure_rows,
    sorted_cutoffs,
)

# Question x run x rank cells computed together: 4 MB per float array, so that memory stays
# bounded and a batch's temporaries mostly stay in cache, while a question's judged
# passages are looked up by a couple of dozen runs in a row (fewer runs a batch cost
# cache misses on the lookups).
BATCH_CELLS = 2**19

IN_RUN = "run {run}: {problem}"

RunKey = TypeVar("RunKey", bound=Hashable)  # whatever names a run: its name, its id


@dataclass(frozen=True)
class _Questions:
    """What every run is scored against: the questions with a relevant document, their
    judged passages, and what their ideal ranked lists score (the denominators)."""

    qids: list[str]
    judged: list[Mapping[str, int]]
    ideal: FloatArray  # question x rank, as deep as any ranking or cutoff reaches
    n_relevant: FloatArray  # R of each question
    ideal_dcg: dict[int, FloatArray]  # cutoff -> question -> DCG@k of the ideal list
    ideal_err: dict[int, FloatArray]  # cutoff -> question -> ERR@k of the ideal list
    max_gain: float


def score_pr_track(
    *,
    qrels: Qrels,
    runs: Mapping[RunKey, Rankings],
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    beta: float = 1.0,
    max_gain: float | None = None,
) -> dict[RunKey, PrRunScores]:
    """`score_pr_run` for every run of `runs` (run -> rankings), keyed alike; nDCG@k computed
    as trec_eval's ndcg_cut also serves as MSnDCG@k. ValueError, naming the run, for a ranking
    that repeats a passage."""
    if beta < 0:
        raise ValueError(BAD_BETA.format(beta=beta))
    ks = sorted_cutoffs(cutoffs)
    depth = max(ks[-1], _longest_ranking(runs))
    questions = _judged_questions(qrels, ks, depth, max_gain)
    names = list(runs)
    per_batch = max(1, BATCH_CELLS // max(1, len(questions.qids) * depth))
    scores: dict[RunKey, PrRunScores] = {}
    for start in range(0, len(names), per_batch):
        batch = names[start : start + per_batch]
        gains = _gain_arrays(questions, [(name, runs[name]) for name in batch], depth)
        scores.update(zip(batch, _batch_scores(questions, gains, ks, beta), strict=True))
    return scores


def _longest_ranking(runs: Mapping[RunKey, Rankings]) -> int:
    return max((max(map(len, rankings.values()), default=1) for rankings in runs.values()),
               default=1)


def _judged_questions(
    qrels: Qrels, ks: list[int], depth: int, max_gain: float | None
) -> _Questions:
    qids = relevant_questions(qrels)
    judged = [qrels[qid] for qid in qids]
    # trec_eval's reading of grades: anything below 1 is nonrelevant, gain 0
    judged_gains = [[float(g) for g in grades.values() if g > 0] for grades in judged]
    top = checked_max_gain(max_gain, judged_gains)
    ideal = ideal_gains(judged_gains, depth)
    return _Questions(
        qids=qids,
        judged=judged,
        ideal=ideal,
        n_relevant=np.array([len(g) for g in judged_gains], dtype=np.float64),
        ideal_dcg={k: dcg_rows(ideal, k) for k in ks},
        ideal_err={k: err_rows(ideal[:, :k], top) for k in ks},
        max_gain=top,
    )


def _gain_arrays(
    questions: _Questions, batch: list[tuple[Hashable, Rankings]], depth: int
) -> FloatArray:
    """question x run x rank gains of `batch`, zero past a ranking's end: each grade looked up
    once, in C, question by question so that a question's judged passages stay in cache."""
    grades: list[int] = []
    lengths: list[int] = []
    for qid, judged in zip(questions.qids, questions.judged, strict=True):
        rankings = [run.get(qid, ()) for _name, run in batch]
        sizes = list(map(len, rankings))
        if sum(map(len, map(set, rankings))) != sum(sizes):
            raise ValueError(_repeated(qid, batch))
        lengths += sizes
        grades.extend(map(judged.get, chain.from_iterable(rankings), repeat(0)))
    shape = (len(questions.qids), len(batch))
    gains = np.zeros((*shape, depth), dtype=np.float64)
    filled = np.arange(depth) < np.array(lengths, dtype=np.intp).reshape(*shape, 1)
    gains[filled] = grades
    # grades below 1 are nonrelevant (gain 0), as trec_eval reads them
    return np.maximum(gains, 0.0, out=gains)


def _repeated(qid: str, batch: list[tuple[Hashable, Rankings]]) -> str:
    """The problem of the first run whose ranking of `qid` repeats a passage."""
    for name, run in batch:
        seen: set[str] = set()
        for docid in run.get(qid, ()):
            if docid in seen:
                problem = DUPLICATE_DOCUMENT.format(qid=qid, docid=docid)
                return IN_RUN.format(run=name, problem=problem)
            seen.add(docid)
    raise AssertionError("no ranking repeats a passage")  # pragma: no cover


def _batch_scores(
    questions: _Questions, gains: FloatArray, ks: list[int], beta: float
) -> list[PrRunScores]:
    """Every measure of each run of a batch (question x run x rank gains); a question's
    ideal list and R broadcast over the runs."""
    ndcg = {k: dcg_rows(gains, k) / questions.ideal_dcg[k][:, None] for k in ks}
    nerr = {k: err_rows(gains[..., :k], questions.max_gain) / questions.ideal_err[k][:, None]
            for k in ks}
    q_values = q_measure_rows(gains, questions.ideal[:, None, :],
                              questions.n_relevant[:, None], beta=beta)
    qids = questions.qids
    results = []
    for run in range(gains.shape[1]):
        run_ndcg = {k: _question_scores(qids, ndcg[k][:, run]) for k in ks}
        results.append(PrRunScores(
            ndcg=run_ndcg,
            ms_ndcg=run_ndcg,  # the same formula with linear gains (`dcg_rows`)
            nerr={k: _question_scores(qids, nerr[k][:, run]) for k in ks},
            q_measure=_question_scores(qids, q_values[:, run]),
        ))
    return results


def _question_scores(qids: list[str], values: FloatArray) -> QuestionScores:
    return QuestionScores.from_values(dict(zip(qids, values.tolist(), strict=True)))
