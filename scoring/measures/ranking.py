"""Ranking measures for PR runs: trec_eval's nDCG through pytrec_eval, and NTCIREVAL's
Q-measure, nERR@k and (Microsoft) nDCG@k in numpy.

Gains are linear: the gain of a document is its qrels grade (for R2C2, the number of
relevant nuggets citing the PassageKey), 0 if it is not in the qrels. Run-level means
are taken over the questions with at least one relevant document, as trec_eval and
NTCIREVAL do; a run that returned nothing for such a question scores 0 on it
(DESIGN.md section 6).
"""

from __future__ import annotations

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
    """Every ranking measure of one PR run, each keyed by cutoff where it has one.

    ndcg: trec_eval's ndcg_cut through pytrec_eval (the official nDCG@k);
    ms_ndcg, nerr, q_measure: NTCIREVAL's MSnDCG@k, nERR@k and Q-measure (own numpy).
    """

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
        """The PR leaderboard columns (DESIGN.md section 9), full precision."""
        return {key: scores.mean for key, scores in self.by_measure().items()}

    def per_question(self) -> dict[str, dict[str, float]]:
        """measure -> qid -> value, as a snapshot stores them."""
        return {key: dict(scores.per_question) for key, scores in self.by_measure().items()}


def trec_ndcg_cut(
    qrels: Qrels, rankings: Rankings, *, cutoffs: Sequence[int] = DEFAULT_CUTOFFS
) -> dict[int, QuestionScores]:
    """nDCG@k as trec_eval's `ndcg_cut` computes it, through pytrec_eval.

    Linear gain (gain = grade) and a log2(rank + 1) discount at every rank, normalised
    by the ideal ranking of all judged documents cut at k. Source: Järvelin &
    Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4),
    2002, with the log2(r + 1) discount of Burges et al., ICML 2005, as implemented by
    trec_eval (usnistgov/trec_eval, m_ndcg_cut.c).

    trec_eval orders a run by score and breaks ties by document id, descending; each
    ranking is therefore fed with strictly decreasing scores (len - index) so that the
    PassageRank order is kept whatever the document ids are.
    """
    ks = _cutoffs(cutoffs)
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
    """pytrec_eval's results (qid -> trec_eval measure name -> value) for `qids`.

    Each ranking is fed with strictly decreasing scores (len - index), so trec_eval,
    which orders a run by score, keeps its PassageRank order whatever the document ids
    are. A question the run leaves out is missing from the result (the caller scores it
    0). `relevance_level` is trec_eval's `-l`.
    """
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
    """Q-measure of one ranked list (NTCIREVAL's "Q-measure", beta = 1 by default).

    Q = (1/R) * sum over relevant ranks r of BR(r), with the blended ratio
    BR(r) = (C(r) + beta * cg(r)) / (r + beta * cg*(r)), C(r) the number of relevant
    documents in the top r, cg and cg* the cumulative gains of the run and of the ideal
    ranked list, and R the number of relevant documents (min(R, cutoff) with a cutoff).
    Source: Sakai, "On the reliability of information retrieval metrics based on
    graded relevance", Information Processing & Management 43(2), 2007, section 2;
    Sakai & Song, SIGIR 2011 (NTCIREVAL).

    `run_gains` holds the gain at each rank of the run (0 for a nonrelevant document);
    `judged_gains` the gains of the question's judged documents, in any order.
    """
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
    """nDCG@k, "Microsoft version" (NTCIREVAL's MSnDCG@l).

    DCG@k = sum over r <= k of g(r) / log2(r + 1), divided by the same sum over the
    ideal ranked list. Unlike Järvelin & Kekäläinen's original, the discount applies
    from rank 1 on. Source: Burges et al., "Learning to rank using gradient descent",
    ICML 2005; Sakai, "Metrics, statistics, tests", PROMISE Winter School 2013, LNCS
    8173, section 2 (NTCIREVAL). With linear gains it equals trec_eval's ndcg_cut.
    """
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
    """Normalised Expected Reciprocal Rank at k (NTCIREVAL's nERR@l).

    ERR@k = sum over r <= k of (1/r) * Pr(r) * prod over i < r of (1 - Pr(i)), with the
    stopping probability Pr(r) = g(r) / (g_max + 1) as in NTCIREVAL, divided by the ERR@k
    of the ideal ranked list. Source: Chapelle et al., "Expected reciprocal rank for
    graded relevance", CIKM 2009, section 4; normalisation and gain-based Pr from Sakai
    & Song, "Evaluating diversified search results using per-intent graded relevance",
    SIGIR 2011, section 3.

    `max_gain` is g_max, the gain of the highest relevance level; by default the highest
    gain among `judged_gains`. Pass the same value for every question of a collection.
    """
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
    """All ranking measures of one PR run against (derived) qrels.

    `rankings` maps qid to the run's document ids (PassageKeys) in PassageRank order.
    Means are over the questions with at least one relevant document; a question the
    run did not answer scores 0. nERR's g_max defaults to the highest grade in the
    qrels, the top relevance level of the collection.

    The NTCIREVAL measures are computed for all questions at once on zero-padded
    question-by-rank gain matrices; they equal `q_measure`, `ms_ndcg_at_k` and
    `nerr_at_k` applied question by question.
    """
    if beta < 0:
        raise ValueError(BAD_BETA.format(beta=beta))
    ks = _cutoffs(cutoffs)
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
    if max_gain is None:
        max_gain = max((max(g) for g in judged_gains), default=1.0)

    depth = max([*ks, *(len(g) for g in run_gains), *(len(g) for g in judged_gains), 1])
    gains = _padded(run_gains, depth)
    ideal = -np.sort(-_padded(judged_gains, depth), axis=1)
    if max_gain <= 0 or max_gain < float(np.max(ideal, initial=0.0)):
        raise ValueError(BAD_MAX_GAIN.format(max_gain=max_gain))
    ranks = np.arange(1, depth + 1, dtype=np.float64)

    relevant = gains > 0
    blended = (np.cumsum(relevant, axis=1) + beta * np.cumsum(gains, axis=1)) / (
        ranks + beta * np.cumsum(ideal, axis=1)
    )
    n_relevant = np.count_nonzero(ideal, axis=1)
    q_values = (blended * relevant).sum(axis=1) / np.maximum(n_relevant, 1)

    discount = 1.0 / np.log2(ranks + 1.0)
    ms_ndcg: dict[int, FloatArray] = {}
    nerr: dict[int, FloatArray] = {}
    for k in ks:
        ms_ndcg[k] = (gains[:, :k] * discount[:k]).sum(axis=1) / (ideal[:, :k] * discount[:k]).sum(
            axis=1
        )
        nerr[k] = _err_rows(gains[:, :k], max_gain) / _err_rows(ideal[:, :k], max_gain)

    def per_question(values: FloatArray) -> QuestionScores:
        return QuestionScores.from_values(dict(zip(qids, values.tolist(), strict=True)))

    return PrRunScores(
        ndcg=trec_ndcg_cut(qrels, rankings, cutoffs=ks),
        ms_ndcg={k: per_question(ms_ndcg[k]) for k in ks},
        nerr={k: per_question(nerr[k]) for k in ks},
        q_measure=per_question(q_values),
    )


def _cutoffs(cutoffs: Sequence[int]) -> list[int]:
    ks = sorted({check_cutoff(k) for k in cutoffs})
    if not ks:
        raise ValueError(NO_CUTOFFS)
    return ks


def _padded(rows: list[list[float]], depth: int) -> FloatArray:
    matrix = np.zeros((len(rows), depth), dtype=np.float64)
    for i, row in enumerate(rows):
        matrix[i, : len(row)] = row
    return matrix


def _err_rows(gains: FloatArray, max_gain: float) -> FloatArray:
    """ERR of each row of a question-by-rank gain matrix (see `nerr_at_k`)."""
    stop = gains / (max_gain + 1.0)
    reach = np.ones_like(stop)
    reach[:, 1:] = np.cumprod(1.0 - stop, axis=1)[:, :-1]
    ranks = np.arange(1, gains.shape[1] + 1, dtype=np.float64)
    result: FloatArray = (stop * reach / ranks).sum(axis=1)
    return result


def _gains_and_ideal(
    run_gains: npt.ArrayLike, judged_gains: npt.ArrayLike, cutoff: int | None
) -> tuple[FloatArray, FloatArray, int]:
    """The run's gains cut at `cutoff`, the ideal gains, and the number of relevant
    documents R.

    The ideal list is as deep as the cutoff, or without one as deep as the run or the
    relevant documents reach (zeros past the last relevant one), so cg*(r) is defined
    wherever cg(r) is.
    """
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
