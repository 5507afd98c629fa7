"""Ranking measures of PR runs: trec_eval's nDCG through pytrec_eval; NTCIREVAL's Q-measure,
nERR@k and MSnDCG@k in numpy. Linear gains; means over the questions with a relevant
document, an unanswered one scoring 0 (docs/measures.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytrec_eval

from .common import (
    NO_RELEVANT_DOCUMENTS,
    Qrels,
    QuestionScores,
    Rankings,
    check_cutoff,
    check_unique_documents,
    relevant_questions,
)

DEFAULT_CUTOFFS = (10, 20)
NEGATIVE_GAIN = "gains must be non-negative"
BAD_MAX_GAIN = "max_gain must be positive and at least every gain, got {max_gain!r}"
NO_CUTOFFS = "at least one cutoff is needed"
BAD_BETA = "beta must be non-negative, got {beta!r}"

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PrRunScores:
    """Every ranking measure of one PR run, keyed by cutoff where it has one: ndcg from
    trec_eval (the official nDCG@k); ms_ndcg, nerr and q_measure as NTCIREVAL computes them."""

    ndcg: Mapping[int, QuestionScores]
    ms_ndcg: Mapping[int, QuestionScores]
    nerr: Mapping[int, QuestionScores]
    q_measure: QuestionScores

    def by_measure(self) -> dict[str, QuestionScores]:
        """Every measure under its catalogue key (catalogue.py): "ndcg@10", ..."""
        measures = {f"ndcg@{k}": scores for k, scores in self.ndcg.items()}
        measures["q_measure"] = self.q_measure
        measures.update({f"nerr@{k}": scores for k, scores in self.nerr.items()})
        measures.update({f"ms_ndcg@{k}": scores for k, scores in self.ms_ndcg.items()})
        return measures

    def leaderboard_row(self) -> dict[str, float]:
        """The PR leaderboard columns, full precision."""
        return {key: scores.mean for key, scores in self.by_measure().items()}

    def per_question(self) -> dict[str, dict[str, float]]:
        """measure -> qid -> value, as a snapshot stores them."""
        return {key: dict(scores.per_question) for key, scores in self.by_measure().items()}


def trec_ndcg_cut(
    qrels: Qrels, rankings: Rankings, *, cutoffs: Sequence[int] = DEFAULT_CUTOFFS
) -> dict[int, QuestionScores]:
    """nDCG@k as trec_eval's `ndcg_cut` computes it, through pytrec_eval (Järvelin and
    Kekäläinen, ACM TOIS 20(4), 2002; the discount of Burges et al., ICML 2005), each ranking
    fed so that its PassageRank order stands whatever the ids (docs/measures.md)."""
    ks = sorted_cutoffs(cutoffs)
    qids = relevant_questions(qrels)
    per_question: dict[int, dict[str, float]] = {k: {} for k in ks}
    results = trec_eval_results(qrels, rankings, qids,
                                {"ndcg_cut." + ",".join(str(k) for k in ks)})
    for k in ks:
        for qid in qids:
            per_question[k][qid] = float(results.get(qid, {}).get(f"ndcg_cut_{k}", 0.0))
    return {k: QuestionScores.from_values(per_question[k]) for k in ks}


def trec_eval_results(
    qrels: Qrels, rankings: Rankings, qids: Sequence[str], measures: set[str], *,
    relevance_level: int = 1,
) -> dict[str, dict[str, float]]:
    """pytrec_eval's results (qid -> measure -> value) for `qids`, each ranking fed with strictly
    decreasing scores so that its order stands; `relevance_level` is trec_eval's `-l`. A
    question the run leaves out is missing (the caller scores it 0)."""
    run: dict[str, dict[str, float]] = {}
    for qid in qids:
        ranking = rankings.get(qid, ())
        check_unique_documents(qid, ranking)
        if ranking:
            run[qid] = {docid: float(len(ranking) - i) for i, docid in enumerate(ranking)}
    if not run:
        return {}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {qid: {docid: int(grade) for docid, grade in qrels[qid].items()} for qid in qids},
        measures, relevance_level=relevance_level,
    )
    return dict(evaluator.evaluate(run))


def q_measure(
    run_gains: npt.ArrayLike,
    judged_gains: npt.ArrayLike,
    *,
    beta: float = 1.0,
    cutoff: int | None = None,
) -> float:
    """Q = (1/R) sum over relevant ranks r of (C(r) + beta cg(r)) / (r + beta cg*(r)); with a
    cutoff, R is capped at it. Source: Sakai, IP&M 43(2), 2007, section 2; NTCIREVAL
    (docs/measures.md)."""
    if beta < 0:
        raise ValueError(BAD_BETA.format(beta=beta))
    gains, ideal, n_relevant = _gains_and_ideal(run_gains, judged_gains, cutoff)
    if cutoff is not None:
        n_relevant = min(n_relevant, cutoff)
    ranks = np.arange(1, gains.size + 1, dtype=np.float64)
    relevant = gains > 0
    ideal_cg = np.cumsum(ideal)[: gains.size]
    blended = (np.cumsum(relevant) + beta * np.cumsum(gains)) / (ranks + beta * ideal_cg)
    return float(blended[relevant].sum() / n_relevant)


def ms_ndcg_at_k(run_gains: npt.ArrayLike, judged_gains: npt.ArrayLike, *, k: int) -> float:
    """NTCIREVAL's MSnDCG@k: DCG discounted by log2(r + 1) from rank 1, over the ideal list's.
    Source: Burges et al., ICML 2005; Sakai, PROMISE Winter School 2013, LNCS 8173, section 2.
    With linear gains it equals trec_eval's ndcg_cut."""
    gains, ideal, _ = _gains_and_ideal(run_gains, judged_gains, check_cutoff(k))
    discount = 1.0 / np.log2(np.arange(2, ideal.size + 2, dtype=np.float64))
    return float((gains * discount[: gains.size]).sum() / (ideal * discount).sum())


def nerr_at_k(
    run_gains: npt.ArrayLike,
    judged_gains: npt.ArrayLike,
    *,
    k: int,
    max_gain: float | None = None,
) -> float:
    """nERR@k: ERR@k with stopping probability g(r) / (g_max + 1), over the ideal list's ERR@k.
    Source: Chapelle et al., CIKM 2009, section 4; Sakai and Song, SIGIR 2011, section 3.
    g_max defaults to the highest judged gain: pass one value for every question."""
    gains, ideal, _ = _gains_and_ideal(run_gains, judged_gains, check_cutoff(k))
    top = float(np.max(ideal)) if max_gain is None else float(max_gain)
    if top <= 0 or top < float(np.max(ideal)) or (gains.size and top < float(np.max(gains))):
        raise ValueError(BAD_MAX_GAIN.format(max_gain=max_gain))
    return _err(gains, top) / _err(ideal, top)


def score_pr_run(
    *,
    qrels: Qrels,
    rankings: Rankings,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    beta: float = 1.0,
    max_gain: float | None = None,
) -> PrRunScores:
    """All ranking measures of one PR run (qid -> PassageKeys in PassageRank order) on qrels:
    the per-run reference, nDCG from pytrec_eval itself; `score_pr_track` scores every run of
    a track at once (docs/measures.md)."""
    if beta < 0:
        raise ValueError(BAD_BETA.format(beta=beta))
    ks = sorted_cutoffs(cutoffs)
    qids = relevant_questions(qrels)
    run_gains: list[list[float]] = []
    judged_gains: list[list[float]] = []
    for qid in qids:
        judged = qrels[qid]
        ranking = rankings.get(qid, ())
        check_unique_documents(qid, ranking)
        # trec_eval's reading of grades: anything below 1 is nonrelevant, gain 0
        run_gains.append([float(max(judged.get(docid, 0), 0)) for docid in ranking])
        judged_gains.append([float(g) for g in judged.values() if g > 0])
    max_gain = checked_max_gain(max_gain, judged_gains)

    depth = max([*ks, *(len(g) for g in run_gains), 1])
    gains = _padded(run_gains, depth)
    ideal = ideal_gains(judged_gains, depth)
    n_relevant = np.array([len(g) for g in judged_gains], dtype=np.float64)
    q_values = q_measure_rows(gains, ideal, n_relevant, beta=beta)
    ms_ndcg = {k: dcg_rows(gains, k) / dcg_rows(ideal, k) for k in ks}
    nerr = {k: err_rows(gains[:, :k], max_gain) / err_rows(ideal[:, :k], max_gain)
            for k in ks}

    def per_question(values: FloatArray) -> QuestionScores:
        return QuestionScores.from_values(dict(zip(qids, values.tolist(), strict=True)))

    return PrRunScores(
        ndcg=trec_ndcg_cut(qrels, rankings, cutoffs=ks),
        ms_ndcg={k: per_question(ms_ndcg[k]) for k in ks},
        nerr={k: per_question(nerr[k]) for k in ks},
        q_measure=per_question(q_values),
    )


# --- the formulas on question-by-rank gain arrays ----------------------------------------
# The last axis is the rank; the ones before it say whose gains they are (a question, or a
# run and a question), and a question's ideal gains broadcast over the runs. Rankings are
# zero-padded past their end. `score_pr_run` and `score_pr_track` both compute on them.


def ideal_gains(judged_gains: Sequence[Sequence[float]], depth: int) -> FloatArray:
    """Each question's ideal ranked list: its positive gains, highest first, cut or zero-padded
    to `depth`, which need only reach the deepest rank any measure reads."""
    ideal = np.zeros((len(judged_gains), depth), dtype=np.float64)
    for i, gains in enumerate(judged_gains):
        best = sorted((g for g in gains if g > 0), reverse=True)[:depth]
        ideal[i, : len(best)] = best
    return ideal


def dcg_rows(gains: FloatArray, k: int) -> FloatArray:
    """DCG@k of each row, summed rank by rank with C's log2 as trec_eval's m_ndcg_cut.c does, so
    nDCG agrees with trec_eval's to the last bit or two (Järvelin and Kekäläinen, 2002; Burges
    et al., 2005); with linear gains it is also NTCIREVAL's MSnDCG@k."""
    total = np.zeros(gains.shape[:-1], dtype=np.float64)
    for i in range(min(k, gains.shape[-1])):
        total += gains[..., i] / math.log2(i + 2)
    return total


def q_measure_rows(
    gains: FloatArray, ideal: FloatArray, n_relevant: FloatArray, *, beta: float
) -> FloatArray:
    """Q-measure of each row (see `q_measure`): `ideal` holds each question's ideal gains
    at least as deep as `gains`, `n_relevant` its number of relevant documents R."""
    depth = gains.shape[-1]
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    relevant = gains > 0
    blended = (np.cumsum(relevant, axis=-1) + beta * np.cumsum(gains, axis=-1)) / (
        ranks + beta * np.cumsum(ideal[..., :depth], axis=-1)
    )
    result: FloatArray = (blended * relevant).sum(axis=-1) / np.maximum(n_relevant, 1.0)
    return result


def err_rows(gains: FloatArray, max_gain: float) -> FloatArray:
    """ERR of each row of a question-by-rank gain matrix (see `nerr_at_k`)."""
    stop = gains / (max_gain + 1.0)
    reach = np.ones_like(stop)
    reach[..., 1:] = np.cumprod(1.0 - stop, axis=-1)[..., :-1]
    ranks = np.arange(1, gains.shape[-1] + 1, dtype=np.float64)
    result: FloatArray = (stop * reach / ranks).sum(axis=-1)
    return result


def checked_max_gain(max_gain: float | None, judged_gains: Sequence[Sequence[float]]) -> float:
    """nERR's g_max: `max_gain`, or by default the highest gain the qrels give; ValueError
    unless it is positive and at least every gain."""
    top = max((max(g, default=0.0) for g in judged_gains), default=0.0)
    chosen = (top if top > 0 else 1.0) if max_gain is None else float(max_gain)
    if chosen <= 0 or chosen < top:
        raise ValueError(BAD_MAX_GAIN.format(max_gain=max_gain))
    return chosen


def sorted_cutoffs(cutoffs: Sequence[int]) -> list[int]:
    """The distinct cutoffs, ascending; ValueError for none or one that is not positive."""
    ks = sorted({check_cutoff(k) for k in cutoffs})
    if not ks:
        raise ValueError(NO_CUTOFFS)
    return ks


def _padded(rows: list[list[float]], depth: int) -> FloatArray:
    matrix = np.zeros((len(rows), depth), dtype=np.float64)
    for i, row in enumerate(rows):
        matrix[i, : len(row)] = row
    return matrix


def _gains_and_ideal(
    run_gains: npt.ArrayLike, judged_gains: npt.ArrayLike, cutoff: int | None
) -> tuple[FloatArray, FloatArray, int]:
    """The run's gains cut at `cutoff`, the ideal gains as deep as the cutoff (or as the run or
    the relevant documents reach), and R: cg*(r) is defined wherever cg(r) is."""
    gains = np.asarray(run_gains, dtype=np.float64).ravel()
    judged = np.asarray(judged_gains, dtype=np.float64).ravel()
    if (gains.size and np.min(gains) < 0) or (judged.size and np.min(judged) < 0):
        raise ValueError(NEGATIVE_GAIN)
    judged = judged[judged > 0]
    if judged.size == 0:
        raise ValueError(NO_RELEVANT_DOCUMENTS)
    if cutoff is not None:
        gains = gains[: check_cutoff(cutoff)]
    depth = max(gains.size, judged.size) if cutoff is None else cutoff
    ideal = np.zeros(depth, dtype=np.float64)
    best = np.sort(judged)[::-1][:depth]
    ideal[: best.size] = best
    return gains, ideal, int(judged.size)


def _err(gains: FloatArray, max_gain: float) -> float:
    if gains.size == 0:
        return 0.0
    stop = gains / (max_gain + 1.0)
    reach = np.concatenate(([1.0], np.cumprod(1.0 - stop)[:-1]))
    ranks = np.arange(1, gains.size + 1, dtype=np.float64)
    return float((stop * reach / ranks).sum())
