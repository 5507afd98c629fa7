"""Every run of a track scored at once: `score_pr_track` gives each run what
`score_pr_run` gives it, its nDCG is pytrec_eval's (the checker of record) to 1e-12, and
`score_ac_track` gives what `score_ac_run` gives. On the toy campaign, trec_eval's own
test suite and random cases."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.measures import pr_track
from scoring.measures.ac import UNKNOWN_QUESTION, JudgedAnswer, score_ac_run, score_ac_track
from scoring.measures.common import DUPLICATE_DOCUMENT
from scoring.measures.pr_track import IN_RUN, score_pr_track
from scoring.measures.ranking import PrRunScores, score_pr_run
from tests.scoring.measures.test_ranking import (
    read_trec_eval_output,
    read_trec_qrels,
    read_trec_qrels_3col,
    read_trec_run,
    toy_ranking,
    trec_eval_order,
)

# "Identical": every value within this of the per-run functions'.
SAME = 1e-12


def assert_same_scores(ours: PrRunScores, reference: PrRunScores) -> None:
    """Every measure, question by question and as a mean, within SAME."""
    expected = reference.by_measure()
    assert set(ours.by_measure()) == set(expected)
    for key, scores in ours.by_measure().items():
        assert set(scores.per_question) == set(expected[key].per_question), key
        for qid, value in scores.per_question.items():
            assert value == pytest.approx(expected[key].per_question[qid], abs=SAME), (key, qid)
        assert scores.mean == pytest.approx(expected[key].mean, abs=SAME), key


def pytrec_eval_ndcg(qrels: dict[str, dict[str, int]], rankings: dict[str, list[str]],
                     cutoffs: Sequence[int]) -> dict[str, dict[str, float]]:
    """pytrec_eval's ndcg_cut at `cutoffs` for one run, fed in PassageRank order
    (decreasing scores, so that trec_eval keeps the order whatever the document ids)."""
    run = {qid: {docid: float(len(ranking) - i) for i, docid in enumerate(ranking)}
           for qid, ranking in rankings.items() if ranking and qid in qrels}
    measure = "ndcg_cut." + ",".join(str(k) for k in sorted(set(cutoffs)))
    return pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run) if run else {}


def assert_ndcg_is_pytrec_evals(ours: PrRunScores, qrels: dict[str, dict[str, int]],
                                rankings: dict[str, list[str]],
                                cutoffs: Sequence[int] = (10, 20)) -> None:
    """Our nDCG@k of every averaged question equals pytrec_eval's (0 where the run
    returned nothing for it: trec_eval leaves such a question out)."""
    official = pytrec_eval_ndcg(qrels, rankings, cutoffs)
    for k in set(cutoffs):
        for qid, value in ours.ndcg[k].per_question.items():
            expected = official.get(qid, {}).get(f"ndcg_cut_{k}", 0.0)
            assert value == pytest.approx(expected, abs=SAME), (k, qid)


# --- the toy campaign (tests/data/README.md) -------------------------------------------


def test_the_toy_track_scores_each_run_as_score_pr_run_does(examples_dir: Path) -> None:
    qrels = read_trec_qrels_3col(examples_dir / "pr.qrels")
    runs = {name: toy_ranking(examples_dir, name) for name in ("WASEDA-PO-1", "KYOTO-PG-1")}

    scores = score_pr_track(qrels=qrels, runs=runs)

    assert list(scores) == ["WASEDA-PO-1", "KYOTO-PG-1"]
    for name, rankings in runs.items():
        assert_same_scores(scores[name], score_pr_run(qrels=qrels, rankings=rankings))
        assert_ndcg_is_pytrec_evals(scores[name], qrels, rankings)


def test_the_toy_track_scores_as_computed_by_hand(examples_dir: Path) -> None:
    # tests/data/README.md: D001 WASEDA-PO-1:1 grade 2, D003 WASEDA-PO-1:1 and
    # KYOTO-PG-1:1 grade 1. nDCG@10 (linear gain, log2(r + 1) discount; Jarvelin &
    # Kekalainen 2002): D003 1 / (1 + 1/log2 3) for either run; Q-measure (beta = 1;
    # Sakai 2007): WASEDA (1 + 0.5) / 2; nERR@10 (Chapelle et al. 2009, g_max = 2):
    # WASEDA (1 + 0.75) / 2, KYOTO (0 + 0.75) / 2.
    qrels = read_trec_qrels_3col(examples_dir / "pr.qrels")
    runs = {name: toy_ranking(examples_dir, name) for name in ("WASEDA-PO-1", "KYOTO-PG-1")}
    d003 = 1 / (1 + 1 / math.log2(3))

    scores = score_pr_track(qrels=qrels, runs=runs)

    assert scores["WASEDA-PO-1"].ndcg[10].per_question == {
        "D001": 1.0, "D003": pytest.approx(d003, abs=SAME)}
    assert scores["KYOTO-PG-1"].ndcg[20].mean == pytest.approx(d003 / 2, abs=SAME)
    assert scores["WASEDA-PO-1"].q_measure.mean == pytest.approx(0.75, abs=SAME)
    assert scores["WASEDA-PO-1"].nerr[10].mean == pytest.approx(0.875, abs=SAME)
    assert scores["KYOTO-PG-1"].nerr[10].mean == pytest.approx(0.375, abs=SAME)


# --- trec_eval's own test suite (tests/data/trec_eval) ----------------------------------


def test_the_trec_eval_suite_run_scores_as_pytrec_eval_and_trec_eval_say(
    trec_eval_dir: Path,
) -> None:
    qrels = read_trec_qrels(trec_eval_dir / "qrels.test")
    run = read_trec_run(trec_eval_dir / "results.test")
    rankings = {qid: trec_eval_order(scores) for qid, scores in run.items()}
    printed = read_trec_eval_output(trec_eval_dir / "out.test.aq.ndcg_cut",
                                    {"ndcg_cut_10", "ndcg_cut_20"})
    # trec_eval evaluates only the run's queries: restrict the qrels to them (the file
    # holds just those) so that the means are over the same questions.
    judged = {qid: qrels[qid] for qid in run}

    [scores] = score_pr_track(qrels=judged, runs={"results.test": rankings}).values()

    assert_same_scores(scores, score_pr_run(qrels=judged, rankings=rankings))
    assert_ndcg_is_pytrec_evals(scores, judged, rankings)
    for k in (10, 20):
        for qid in run:
            assert round(scores.ndcg[k].per_question[qid], 4) == printed[(f"ndcg_cut_{k}", qid)]
        assert round(scores.ndcg[k].mean, 4) == printed[(f"ndcg_cut_{k}", "all")]


# --- random cases ---------------------------------------------------------------------

documents = st.sampled_from([f"d{i}" for i in range(12)])
questions = st.sampled_from(["q1", "q2", "q3", "q4", "q5"])
# grades below 1 are nonrelevant in trec_eval, negative ones included
qrels_strategy = st.dictionaries(questions, st.dictionaries(documents, st.integers(-1, 4)),
                                 min_size=1)
rankings_strategy = st.dictionaries(questions, st.lists(documents, unique=True, max_size=12))
runs_strategy = st.dictionaries(st.sampled_from(["A", "B", "C", "D"]), rankings_strategy,
                                min_size=1)


@settings(max_examples=300, deadline=None)
@given(qrels=qrels_strategy, runs=runs_strategy,
       cutoffs=st.lists(st.integers(1, 14), min_size=1, max_size=3))
def test_random_tracks_score_as_score_pr_run_and_pytrec_eval_do(qrels, runs, cutoffs) -> None:
    scores = score_pr_track(qrels=qrels, runs=runs, cutoffs=cutoffs)

    assert list(scores) == list(runs)
    for name, rankings in runs.items():
        assert_same_scores(scores[name], score_pr_run(qrels=qrels, rankings=rankings,
                                                      cutoffs=cutoffs))
        assert_ndcg_is_pytrec_evals(scores[name], qrels, rankings, cutoffs)


@settings(max_examples=100, deadline=None)
@given(qrels=qrels_strategy, runs=runs_strategy, beta=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
       max_gain=st.sampled_from([None, 4.0, 9.0]))
def test_beta_and_the_top_gain_reach_every_run(qrels, runs, beta, max_gain) -> None:
    scores = score_pr_track(qrels=qrels, runs=runs, beta=beta, max_gain=max_gain)

    for name, rankings in runs.items():
        assert_same_scores(scores[name], score_pr_run(qrels=qrels, rankings=rankings,
                                                      beta=beta, max_gain=max_gain))


def test_batches_of_runs_give_what_one_batch_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}, "q3": {"d4": 3, "d1": 1}}
    runs = {f"R{i}": {"q1": ["d2", "d1", "d9"][: i % 3 + 1], "q3": ["d4"] if i % 2 else [],
                      "q2": ["d8", "d3"]} for i in range(7)}
    together = score_pr_track(qrels=qrels, runs=runs)
    monkeypatch.setattr(pr_track, "BATCH_CELLS", 1)  # one run a batch

    apart = score_pr_track(qrels=qrels, runs=runs)

    for name in runs:
        assert apart[name] == together[name]


def test_runs_may_be_keyed_by_anything_hashable() -> None:
    scores = score_pr_track(qrels={"q": {"d1": 1}}, runs={17: {"q": ["d1"]}, 4: {}})

    assert list(scores) == [17, 4]
    assert (scores[17].ndcg[10].mean, scores[4].ndcg[10].mean) == (1.0, 0.0)


def test_a_track_without_runs_or_relevant_questions_has_nothing_to_average() -> None:
    assert score_pr_track(qrels={"q": {"d1": 1}}, runs={}) == {}

    scores = score_pr_track(qrels={"q": {"d1": 0}}, runs={"A": {"q": ["d1"]}})

    assert scores["A"].leaderboard_row() == dict.fromkeys(scores["A"].leaderboard_row(), 0.0)
    assert scores["A"].ndcg[10].per_question == {}


def test_it_names_the_run_whose_ranking_repeats_a_passage() -> None:
    problem = DUPLICATE_DOCUMENT.format(qid="q", docid="d1")
    message = IN_RUN.format(run="B", problem=problem)
    runs = {"A": {"q": ["d1", "d2"]}, "B": {"q": ["d2", "d1", "d1"]}}

    with pytest.raises(ValueError, match=re.escape(message)):
        score_pr_track(qrels={"q": {"d1": 1}}, runs=runs)


# --- AC runs -------------------------------------------------------------------------

marks = st.lists(st.sampled_from(["B", "R", "N"]), max_size=6).map(tuple)
judged_answers = st.builds(JudgedAnswer, correct=st.booleans(),
                           confidence=st.integers(0, 100), marks=marks)
CAMPAIGN = ["Q1", "Q2", "Q3", "Q4"]
ac_runs = st.dictionaries(st.sampled_from(["A", "B", "C"]),
                          st.dictionaries(st.sampled_from(CAMPAIGN), judged_answers))


@settings(max_examples=200, deadline=None)
@given(runs=ac_runs)
def test_every_ac_run_scores_as_score_ac_run_scores_it(runs) -> None:
    scores = score_ac_track(qids=CAMPAIGN, runs=runs)

    assert list(scores) == list(runs)
    for name, answers in runs.items():
        assert scores[name] == score_ac_run(qids=CAMPAIGN, answers=answers)
        assert scores[name].questions == score_ac_run(qids=CAMPAIGN, answers=answers).questions


def test_the_toy_ac_run_is_scored_in_a_track_as_alone(toy_marked_run) -> None:
    # tests/data/README.md: D002 (Buzz Aldrin) is the one wrong answer.
    answers = {block.qid: JudgedAnswer(block.qid != "D002", block.confidence,
                                       tuple(mark for mark, _run, _rank in block.nuggets))
               for block in toy_marked_run}
    qids = ["D001", "D002", "D003"]

    [scores] = score_ac_track(qids=qids, runs={"WASEDA-AC-1": answers}).values()

    assert scores == score_ac_run(qids=qids, answers=answers)
    assert scores.hmr == pytest.approx(0.255, abs=SAME)  # worked out in the README
    assert scores.per_question()["nugget_precision"] == {
        "D001": pytest.approx(2 / 3), "D002": 0.0, "D003": pytest.approx(2 / 3)}


def test_an_answer_outside_the_campaign_is_refused_in_any_run() -> None:
    runs = {"A": {"Q1": JudgedAnswer(True, 50)}, "B": {"Q9": JudgedAnswer(True, 50)}}

    with pytest.raises(ValueError, match=re.escape(UNKNOWN_QUESTION.format(qid="Q9"))):
        score_ac_track(qids=CAMPAIGN, runs=runs)
