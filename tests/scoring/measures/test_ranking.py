"""Ranking measures: nDCG@k through pytrec_eval (checked against trec_eval's own test
outputs) and NTCIREVAL's Q-measure, nERR@k and MSnDCG@k in numpy."""

from __future__ import annotations

import re
from math import log2
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from scoring.measures.common import DUPLICATE_DOCUMENT, NO_RELEVANT_DOCUMENTS
from scoring.measures.ranking import (
    ms_ndcg_at_k,
    nerr_at_k,
    q_measure,
    score_pr_run,
    trec_ndcg_cut,
)


def read_trec_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _iteration, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, _q0, docid, _rank, score, _tag = line.split()
        run.setdefault(qid, {})[docid] = float(score)
    return run


def read_trec_eval_output(path: Path, measures: set[str]) -> dict[tuple[str, str], float]:
    values: dict[tuple[str, str], float] = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split()
        if measure in measures:
            values[(measure, qid)] = float(value)
    return values


def trec_eval_order(scores: dict[str, float]) -> list[str]:
    # trec_eval sorts by score, descending, and breaks ties by docno, descending.
    return sorted(scores, key=lambda docid: (scores[docid], docid), reverse=True)


@pytest.fixture(scope="module")
def reference(trec_eval_dir):
    qrels = read_trec_qrels(trec_eval_dir / "qrels.test")
    run = read_trec_run(trec_eval_dir / "results.test")
    expected = read_trec_eval_output(
        trec_eval_dir / "out.test.aq.ndcg_cut", {"ndcg_cut_10", "ndcg_cut_20"}
    )
    return qrels, run, expected


def test_pytrec_eval_reproduces_trec_evals_ndcg_cut_per_query(reference):
    qrels, run, expected = reference

    results = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,20"}).evaluate(run)

    for qid in run:
        for k in (10, 20):
            measure = f"ndcg_cut_{k}"
            assert round(results[qid][measure], 4) == expected[(measure, qid)], (qid, k)


def test_our_rankings_reproduce_trec_evals_ndcg_cut_per_query_and_overall(reference):
    qrels, run, expected = reference
    rankings = {qid: trec_eval_order(scores) for qid, scores in run.items()}
    # out.test.aq averages over the three queries of the run, our mean over the
    # questions with relevant documents: the same three once qrels are restricted.
    judged = {qid: qrels[qid] for qid in run}

    scores = trec_ndcg_cut(judged, rankings, cutoffs=(10, 20))

    for k in (10, 20):
        measure = f"ndcg_cut_{k}"
        for qid in run:
            assert round(scores[k].per_question[qid], 4) == expected[(measure, qid)]
        assert round(scores[k].mean, 4) == expected[(measure, "all")]


def test_ndcg_through_pytrec_eval_matches_a_hand_computed_ranking():
    # Grades 0, 2, 1 at ranks 1..3, ideal 2, 1; linear gain, log2(r + 1) discount
    # (Järvelin & Kekäläinen 2002; trec_eval ndcg_cut).
    qrels = {"q": {"R:1": 0, "R:2": 2, "R:3": 1}}
    dcg = 2 / log2(3) + 1 / log2(4)
    ideal = 2 / log2(2) + 1 / log2(3)

    scores = trec_ndcg_cut(qrels, {"q": ["R:1", "R:2", "R:3"]}, cutoffs=(10,))

    assert scores[10].per_question == {"q": pytest.approx(dcg / ideal)}


def test_it_keeps_passage_rank_order_where_trec_eval_would_break_ties_by_docno():
    qrels = {"q": {"RUN:2": 1}}
    # Fed with equal scores, trec_eval would put RUN:2 first (docno descending): 1.0.
    tied = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(
        {"q": {"RUN:1": 1.0, "RUN:2": 1.0}}
    )
    assert tied["q"]["ndcg_cut_10"] == pytest.approx(1.0)

    scores = trec_ndcg_cut(qrels, {"q": ["RUN:1", "RUN:2"]}, cutoffs=(10,))

    assert scores[10].mean == pytest.approx(1 / log2(3))


def test_ndcg_averages_over_questions_with_relevant_passages_only():
    qrels = {"q1": {"R:1": 1}, "q2": {"R:1": 1}, "no-relevant": {"R:1": 0}}
    rankings = {"q1": ["R:1"], "no-relevant": ["R:1"], "not-in-qrels": ["R:1"]}

    scores = trec_ndcg_cut(qrels, rankings, cutoffs=(10,))[10]

    # q2 is unanswered and scores 0; the others are not averaged over.
    assert scores.per_question == {"q1": 1.0, "q2": 0.0}
    assert scores.mean == 0.5


def test_a_run_that_returned_nothing_scores_zero_on_every_question():
    scores = trec_ndcg_cut({"q1": {"R:1": 1}}, {}, cutoffs=(10, 20))

    assert (scores[10].mean, scores[20].mean) == (0.0, 0.0)


def test_it_rejects_a_ranking_that_repeats_a_passage():
    with pytest.raises(
        ValueError, match=re.escape(DUPLICATE_DOCUMENT.format(qid="q", docid="R:1"))
    ):
        trec_ndcg_cut({"q": {"R:1": 1}}, {"q": ["R:1", "R:1"]})


def test_q_measure_matches_a_hand_computed_ranking():
    # Sakai, IP&M 43(2) 2007: relevant ranks 2 and 3, R = 3, ideal gains 3, 2, 1.
    # BR(2) = (1 + 3) / (2 + 5), BR(3) = (2 + 4) / (3 + 6); Q = (4/7 + 2/3) / 3.
    assert q_measure([0, 3, 1], [3, 2, 1]) == pytest.approx(26 / 63)


def test_q_measure_with_beta_zero_is_average_precision():
    # Sakai 2007, section 2: with beta = 0 the blended ratio is precision, so Q = AP.
    # Relevant at ranks 1 and 3 of 2 relevant: AP = (1/1 + 2/3) / 2.
    assert q_measure([1, 0, 1], [1, 1], beta=0.0) == pytest.approx(5 / 6)


def test_ms_ndcg_matches_a_hand_computed_ranking():
    # Burges et al. 2005 / NTCIREVAL MSnDCG: g(r) / log2(r + 1) from rank 1 on.
    dcg = 3 / log2(3) + 1 / log2(4)
    ideal = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)

    assert ms_ndcg_at_k([0, 3, 1], [3, 2, 1], k=3) == pytest.approx(dcg / ideal)


def test_nerr_matches_a_hand_computed_ranking():
    # Chapelle et al. 2009 with NTCIREVAL's Pr = g / (g_max + 1), g_max = 3:
    # run Pr = 0, 3/4, 1/4: ERR = (1/2)(3/4) + (1/3)(1/4)(1/4) = 19/48;
    # ideal Pr = 3/4, 2/4, 1/4: ERR = 3/4 + (1/2)(2/4)(1/4) + (1/3)(1/4)(1/4)(2/4) = 79/96.
    assert nerr_at_k([0, 3, 1], [3, 2, 1], k=3) == pytest.approx((19 / 48) / (79 / 96))


def test_nerr_uses_the_collections_top_gain_when_given():
    # g_max = 4: run Pr = 0, 1/5: ERR = (1/2)(1/5); ideal Pr = 1/5: ERR = 1/5.
    assert nerr_at_k([0, 1], [1], k=2, max_gain=4) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "measure",
    [
        lambda run, judged: q_measure(run, judged),
        lambda run, judged: ms_ndcg_at_k(run, judged, k=10),
        lambda run, judged: nerr_at_k(run, judged, k=10),
    ],
    ids=["q_measure", "ms_ndcg@10", "nerr@10"],
)
@pytest.mark.parametrize(
    ("run", "judged", "expected"),
    [
        ([3, 2, 1], [1, 2, 3], 1.0),  # the ideal ranking
        ([], [2, 1], 0.0),  # nothing returned
        ([0, 0, 0], [1], 0.0),  # nothing relevant returned
    ],
)
def test_ntcir_measures_are_one_for_the_ideal_ranking_and_zero_for_nothing(
    measure, run, judged, expected
):
    assert measure(run, judged) == pytest.approx(expected)


def test_ntcir_measures_are_undefined_without_relevant_documents():
    with pytest.raises(ValueError, match=re.escape(NO_RELEVANT_DOCUMENTS)):
        q_measure([1], [0, 0])


def test_our_ms_ndcg_agrees_with_pytrec_eval_on_linear_gains():
    rng = np.random.default_rng(3)
    for trial in range(20):
        grades = rng.integers(0, 4, size=30)
        qrels = {"q": {f"d{i}": int(g) for i, g in enumerate(grades)}}
        if not any(grades):
            continue
        ranking = [f"d{i}" for i in rng.permutation(30)[:20]]
        gains = [qrels["q"][d] for d in ranking]

        ours = ms_ndcg_at_k(gains, grades, k=10)
        official = trec_ndcg_cut(qrels, {"q": ranking}, cutoffs=(10,))[10].mean

        assert ours == pytest.approx(official, abs=1e-12), trial


def test_a_whole_run_scores_each_question_as_the_per_question_functions_do():
    rng = np.random.default_rng(11)
    qrels, rankings = {}, {}
    for q in range(40):
        qrels[f"q{q}"] = {
            f"R:{r}": int(rng.integers(1, 5)) for r in range(1, 31) if rng.random() < 0.2
        }
        if q % 7:  # every seventh question unanswered
            depth = int(rng.integers(1, 21))
            rankings[f"q{q}"] = [f"R:{r}" for r in rng.permutation(np.arange(1, 31))[:depth]]
    max_gain = max(g for judged in qrels.values() for g in judged.values())

    scores = score_pr_run(qrels=qrels, rankings=rankings, cutoffs=(5, 10, 20))

    for qid, judged in qrels.items():
        if not judged:
            assert qid not in scores.q_measure.per_question
            continue
        gains = [judged.get(d, 0) for d in rankings.get(qid, [])]
        grades = list(judged.values())
        assert scores.q_measure.per_question[qid] == pytest.approx(q_measure(gains, grades))
        for k in (5, 10, 20):
            assert scores.ms_ndcg[k].per_question[qid] == pytest.approx(
                ms_ndcg_at_k(gains, grades, k=k)
            )
            assert scores.nerr[k].per_question[qid] == pytest.approx(
                nerr_at_k(gains, grades, k=k, max_gain=max_gain)
            )
            assert scores.ms_ndcg[k].per_question[qid] == pytest.approx(
                scores.ndcg[k].per_question[qid]
            )


def toy_ranking(examples_dir: Path, run: str) -> dict[str, list[str]]:
    rankings: dict[str, list[str]] = {}
    for line in (examples_dir / run).read_text(encoding="utf-8").splitlines():
        qid, rank, _docid, _text = line.split(";", 3)
        rankings.setdefault(qid, []).append(f"{run}:{rank}")
    return rankings


def test_the_toy_pr_runs_score_as_computed_by_hand(examples_dir):
    qrels = read_trec_qrels_3col(examples_dir / "pr.qrels")
    # tests/data/README.md: D001 has WASEDA-PO-1:1 (grade 2); D003 has WASEDA-PO-1:1 and
    # KYOTO-PG-1:1 (grade 1 each); D002 has no relevant passage and is not averaged over.
    # nDCG (linear gain, log2(r + 1) discount): D001 WASEDA 2/2 = 1, KYOTO 0; D003 one
    # grade-1 passage at rank 1 against the ideal [1, 1]: 1 / (1 + 1/log2(3)) = 0.613147
    # for either run (neither returns the other's passage).
    # Q-measure (beta = 1; Sakai 2004): D001 WASEDA BR(1) = 3/3 over R = 1 -> 1;
    # D003 BR(1) = 2/2 over R = 2 -> 0.5. Means: WASEDA 0.75, KYOTO 0.25.
    # nERR@10 (Pr = g / (g_max + 1), g_max = 2; Chapelle et al. 2009): D001 WASEDA
    # (2/3) / (2/3) = 1; D003 (1/3) / (1/3 + 1/2 * 2/3 * 1/3) = 0.75.
    # Means: WASEDA 0.875, KYOTO 0.375.
    d003 = 0.613147

    waseda = score_pr_run(qrels=qrels, rankings=toy_ranking(examples_dir, "WASEDA-PO-1"))
    kyoto = score_pr_run(qrels=qrels, rankings=toy_ranking(examples_dir, "KYOTO-PG-1"))

    assert waseda.ndcg[10].per_question == {"D001": 1.0, "D003": pytest.approx(d003, abs=1e-6)}
    assert kyoto.ndcg[10].per_question == {"D001": 0.0, "D003": pytest.approx(d003, abs=1e-6)}
    assert waseda.leaderboard_row()["ndcg@10"] == pytest.approx(0.806574, abs=1e-6)
    assert kyoto.leaderboard_row()["ndcg@20"] == pytest.approx(0.306574, abs=1e-6)
    assert waseda.leaderboard_row()["q_measure"] == pytest.approx(0.75)
    assert kyoto.leaderboard_row()["q_measure"] == pytest.approx(0.25)
    assert waseda.leaderboard_row()["nerr@10"] == pytest.approx(0.875)
    assert kyoto.leaderboard_row()["nerr@10"] == pytest.approx(0.375)
    assert waseda.ms_ndcg[10].mean == pytest.approx(waseda.ndcg[10].mean)
    assert set(waseda.leaderboard_row()) >= {"ndcg@10", "ndcg@20", "q_measure", "nerr@10"}


def read_trec_qrels_3col(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels
