"""RUBRIC / EXAM++ measures: labels, Rubric-Qrels and the trec_eval measures on them,
Rubric-Cover@k, n-EXAM and the meta-evaluation (docs/measures.md; Farzi & Dietz,
"Pencils Down!", ICTIR 2024)."""

from __future__ import annotations

import math
import re

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.measures import catalogue
from scoring.measures.rubric import (
    BAD_GRADE,
    NO_COMMON_PASSAGES,
    NO_COMMON_RUNS,
    NOT_IN_POOL,
    UNKNOWN_ITEM,
    covered_items,
    grade_judgment_table,
    leaderboard_agreement,
    n_exam_run,
    pooled_cover,
    qrels_kappa,
    rubric_cover_at_k,
    rubric_cover_run,
    rubric_label,
    rubric_qrels,
    rubric_qrels_lines,
    rubric_trec_measures,
    score_rubric_run,
)

ITEMS = ("i1", "i2", "i3", "i4")
GRADES = {
    "p1": {"i1": 5, "i2": 1},
    "p2": {"i2": 4},
    "p3": {"i3": 4, "i1": 4},
    "p4": {"i4": 3},
}


@pytest.mark.parametrize(
    ("label", "min_grade", "expected"),
    [
        ("max", 4, 5),  # highest self-rating
        ("count", 4, 2),  # items graded >= 4: i1 and i3
        ("count", 5, 1),
        ("count", 2, 3),
    ],
)
def test_a_passage_label_is_its_best_grade_or_its_count_of_answered_items(
    label, min_grade, expected
):
    assert rubric_label({"i1": 5, "i2": 2, "i3": 4}, label=label,
                        min_grade=min_grade) == expected


def test_an_ungraded_passage_is_labelled_zero():
    assert rubric_label({}) == 0


def test_rubric_qrels_list_every_graded_passage_label_zero_included():
    grades = {"Q2": {"p9": {"i1": 0}}, "Q1": GRADES}

    qrels = rubric_qrels(grades)

    assert qrels == {"Q1": {"p1": 5, "p2": 4, "p3": 4, "p4": 3}, "Q2": {"p9": 0}}
    assert rubric_qrels_lines(qrels) == [
        "Q1 0 p1 5", "Q1 0 p2 4", "Q1 0 p3 4", "Q1 0 p4 3", "Q2 0 p9 0"]


def test_count_qrels_count_the_items_at_min_grade():
    # p1: i1 = 5 (i2 = 1 is below 4); p3: i1 and i3; p4: none.
    assert rubric_qrels({"Q": GRADES}, label="count", min_grade=4) == {
        "Q": {"p1": 1, "p2": 1, "p3": 2, "p4": 0}}


def test_the_qrels_file_reads_back_through_pytrec_eval():
    qrels = rubric_qrels({"Q1": GRADES, "Q2": {"x": {"i1": 2}}})

    assert pytrec_eval.parse_qrel(rubric_qrels_lines(qrels)) == qrels


# The trec_eval measures on Rubric-Qrels. Query Q, label "max", min_grade 4:
#   labels p1 5, p2 4, p3 4, p4 3, p5 0; relevant at level 4: p1, p2, p3 (R = 3).
# The run ranks p4, p1, p5, p3, x9 (x9 unjudged): relevant at ranks 2 and 4.
HAND_GRADES = {"Q": {**GRADES, "p5": {"i1": 0}}}
HAND_RUN = {"Q": ["p4", "p1", "p5", "p3", "x9"]}


def test_trec_measures_on_rubric_qrels_match_a_hand_computation():
    qrels = rubric_qrels(HAND_GRADES, label="max", min_grade=4)

    scores = rubric_trec_measures(qrels, HAND_RUN, min_grade=4)

    # AP = (1/2 + 2/4) / R = 1/3; RR = 1/2; P@10 = 2/10 (trec_eval's definitions).
    assert scores["map"].per_question == {"Q": pytest.approx(1 / 3)}
    assert scores["recip_rank"].mean == pytest.approx(0.5)
    assert scores["p@10"].mean == pytest.approx(0.2)
    # nDCG@10, graded gains = labels (Järvelin & Kekäläinen, log2(r + 1) discount):
    # DCG = 3/log2(2) + 5/log2(3) + 0 + 4/log2(5); ideal 5, 4, 4, 3 at ranks 1..4.
    dcg = 3 + 5 / math.log2(3) + 4 / math.log2(5)
    ideal = 5 + 4 / math.log2(3) + 4 / math.log2(4) + 3 / math.log2(5)
    assert scores["ndcg@10"].mean == pytest.approx(dcg / ideal)


def test_with_count_labels_the_relevance_level_applies_to_the_counts():
    # The relevance level min_grade applies to the labels themselves. With min_grade 2,
    # counts of items graded >= 2: p1 1 (i1), p2 1, p3 2, p4 1, p5 0; only p3 reaches
    # level 2, at rank 4: AP = (1/4) / 1, RR = 1/4, P@10 = 1/10.
    qrels = rubric_qrels(HAND_GRADES, label="count", min_grade=2)
    assert qrels["Q"] == {"p1": 1, "p2": 1, "p3": 2, "p4": 1, "p5": 0}

    scores = rubric_trec_measures(qrels, HAND_RUN, min_grade=2)

    assert (scores["map"].mean, scores["recip_rank"].mean, scores["p@10"].mean) == (
        pytest.approx(0.25), pytest.approx(0.25), pytest.approx(0.1))


def test_the_min_grade_level_is_trec_evals_relevance_level():
    # Labels 0..5 on two queries, level 3: the same numbers as pytrec_eval called
    # directly with relevance_level=3 (trec_eval -l 3) on the same qrels and run.
    qrels = {"A": {"d1": 5, "d2": 2, "d3": 3, "d4": 0}, "B": {"d1": 1, "d5": 4, "d6": 3}}
    rankings = {"A": ["d2", "d9", "d3", "d1"], "B": ["d6", "d1", "d5"]}
    run = {qid: {docid: float(10 - rank) for rank, docid in enumerate(ranking)}
           for qid, ranking in rankings.items()}
    direct = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "recip_rank", "P_10", "ndcg_cut_10"}, relevance_level=3
    ).evaluate(run)

    ours = rubric_trec_measures(qrels, rankings, min_grade=3)

    for key, name in (("map", "map"), ("recip_rank", "recip_rank"), ("p@10", "P_10"),
                      ("ndcg@10", "ndcg_cut_10")):
        assert ours[key].per_question == {
            qid: pytest.approx(direct[qid][name]) for qid in ("A", "B")}
    # and the level matters: at the default level 1, d2 (label 2) is relevant at rank 1
    assert ours["recip_rank"].per_question["A"] == pytest.approx(1 / 3)
    assert rubric_trec_measures(qrels, rankings, min_grade=1)["recip_rank"].per_question[
        "A"] == 1.0


def test_binary_measures_leave_out_queries_without_a_passage_at_min_grade():
    # Q2's best label is 3: nDCG@10 is defined on it (a gain > 0), MAP at level 4 is not.
    grades = {**HAND_GRADES, "Q2": {"p1": {"i1": 3}}}
    qrels = rubric_qrels(grades)

    scores = rubric_trec_measures(qrels, {**HAND_RUN, "Q2": ["p1"]}, min_grade=4)

    assert set(scores["map"].per_question) == {"Q"}
    assert scores["ndcg@10"].per_question["Q2"] == 1.0


def test_a_run_that_skipped_a_query_scores_zero_on_it():
    qrels = rubric_qrels(HAND_GRADES)

    scores = rubric_trec_measures(qrels, {}, min_grade=4)

    assert {key: s.per_question for key, s in scores.items()} == {
        key: {"Q": 0.0} for key in ("ndcg@10", "map", "recip_rank", "p@10")}


@pytest.mark.parametrize(
    ("k", "min_grade", "expected"),
    [
        (1, 4, 1 / 4),  # p1 covers i1
        (2, 4, 2 / 4),  # p2 adds i2
        (3, 4, 3 / 4),  # p3 adds i3 (i1 again)
        (4, 4, 3 / 4),  # p4's 3 is below the threshold
        (4, 3, 4 / 4),
        (4, 5, 1 / 4),
        (None, 4, 3 / 4),  # a response: all its segments
    ],
)
def test_rubric_cover_is_the_share_of_items_answered_in_the_top_k(k, min_grade, expected):
    ranking = ["p1", "p2", "p3", "p4"]

    assert rubric_cover_at_k(ranking, GRADES, ITEMS, k=k, min_grade=min_grade) == expected


def test_a_run_scores_zero_cover_on_a_query_it_did_not_answer():
    scores = rubric_cover_run(
        rankings={"A": ["p1"]},
        grades={"A": GRADES, "B": GRADES},
        items={"A": ITEMS, "B": ITEMS, "empty": ()},
        k=10,
    )

    # "empty" has no items: Rubric-Cover is undefined there and it is left out.
    assert scores.per_question == {"A": 0.25, "B": 0.0}
    assert scores.mean == 0.125


# n-EXAM (Sander & Dietz, DESIRES 2021; docs/measures.md). Query Q has 4 items.
# Top 2: run A's p1 covers i1 (p4's 3 is below 4); run B's p2 and p3 cover i2, i1, i3.
# Top 1: A's p1 covers i1, B's p2 covers i2. Query R: no run covers any item (p4's 3),
# so its n-EXAM is 0/0 and it is left out of the mean.
RUNS = {"A": {"Q": ["p1", "p4"], "R": ["p4"]}, "B": {"Q": ["p2", "p3"], "R": ["p4"]}}
POOL_GRADES = {"Q": GRADES, "R": {"p4": {"i4": 3}}}
POOL_ITEMS = {"Q": ITEMS, "R": ITEMS}


def test_n_exam_divides_by_the_items_some_run_covers():
    pooled = pooled_cover(runs=RUNS.values(), grades=POOL_GRADES, items=POOL_ITEMS, k=2)
    assert pooled == {"Q": {"i1", "i2", "i3"}, "R": frozenset()}

    a, b = (n_exam_run(rankings=RUNS[name], grades=POOL_GRADES, items=POOL_ITEMS,
                       pooled=pooled, k=2) for name in ("A", "B"))

    # A: |{i1}| / |{i1, i2, i3}|; B: 3 / 3. R is left out of both.
    assert a.per_question == {"Q": 1 / 3}
    assert b.per_question == {"Q": 1.0}
    assert (a.mean, b.mean) == (1 / 3, 1.0)


def test_n_exam_and_cover_of_two_runs_by_hand():
    pooled = pooled_cover(runs=RUNS.values(), grades=POOL_GRADES, items=POOL_ITEMS, k=1)
    assert pooled == {"Q": {"i1", "i2"}, "R": frozenset()}

    scores = {
        name: score_rubric_run(rankings=rankings, grades=POOL_GRADES, items=POOL_ITEMS,
                               qrels=rubric_qrels(POOL_GRADES), pooled=pooled, cover_k=1,
                               name_k=1)
        for name, rankings in RUNS.items()}

    # n-EXAM@1: each run covers 1 of the 2 pooled items.
    assert scores["A"].n_exam.per_question == {"Q": 0.5}
    assert scores["B"].n_exam.per_question == {"Q": 0.5}
    # Rubric-Cover@1 keeps R (it has items) at 0: (1/4 + 0) / 2 for each run.
    assert scores["A"].rubric_cover.per_question == {"Q": 0.25, "R": 0.0}
    # The key carries the cover_k it is named by.
    assert scores["B"].leaderboard_row()["rubric_cover@1"] == 0.125


def test_n_exam_refuses_a_pool_that_misses_the_run():
    pooled = pooled_cover(runs=[RUNS["A"]], grades=POOL_GRADES, items=POOL_ITEMS, k=1)

    with pytest.raises(ValueError, match=re.escape(NOT_IN_POOL.format(qid="Q", items="i2"))):
        n_exam_run(rankings=RUNS["B"], grades=POOL_GRADES, items=POOL_ITEMS,
                   pooled=pooled, k=1)  # B's p2 covers i2; A's pool is {i1}


@pytest.mark.parametrize("grade", [-1, 6, 2.5, True])
def test_it_rejects_a_grade_outside_0_to_5(grade):
    with pytest.raises(ValueError, match=re.escape(BAD_GRADE.format(grade=grade))):
        rubric_label({"i1": grade})


def test_it_rejects_a_grade_on_an_item_outside_the_test_bank():
    with pytest.raises(ValueError, match=re.escape(UNKNOWN_ITEM.format(passage="p1", item="q9"))):
        rubric_cover_at_k(["p1"], {"p1": {"q9": 5}}, ITEMS, k=1)


# --- Properties -------------------------------------------------------------------

item_ids = st.sampled_from(["i1", "i2", "i3", "i4", "i5"])
passage_ids = st.sampled_from([f"p{n}" for n in range(8)])
one_query_grades = st.dictionaries(passage_ids, st.dictionaries(item_ids, st.integers(0, 5)))
rankings = st.lists(passage_ids, unique=True, max_size=8)


@settings(max_examples=200, deadline=None)
@given(grades=one_query_grades, runs=st.lists(rankings, min_size=1, max_size=4),
       k=st.one_of(st.none(), st.integers(1, 8)), min_grade=st.integers(1, 5))
def test_cover_lies_in_0_1_and_n_exam_is_at_least_cover(grades, runs, k, min_grade):
    items = {"Q": ["i1", "i2", "i3", "i4", "i5"]}
    all_grades = {"Q": grades}
    pooled = pooled_cover(runs=[{"Q": run} for run in runs], grades=all_grades,
                          items=items, k=k, min_grade=min_grade)
    for run in runs:
        cover = rubric_cover_run(rankings={"Q": run}, grades=all_grades, items=items, k=k,
                                 min_grade=min_grade).per_question["Q"]
        n_exam = n_exam_run(rankings={"Q": run}, grades=all_grades, items=items,
                            pooled=pooled, k=k, min_grade=min_grade).per_question
        assert 0.0 <= cover <= 1.0
        if pooled["Q"]:
            assert cover <= n_exam["Q"] <= 1.0
        else:
            assert n_exam == {} and cover == 0.0
    # the pool is exactly what the runs cover together
    assert pooled["Q"] == frozenset().union(*(
        covered_items(run, grades, items["Q"], k=k, min_grade=min_grade) for run in runs))


@settings(max_examples=100, deadline=None)
@given(grades=one_query_grades, min_grade=st.integers(1, 5))
def test_every_graded_passage_is_in_the_qrels_with_a_label_its_rule_bounds(grades, min_grade):
    qrels_max = rubric_qrels({"Q": grades}, label="max", min_grade=min_grade)
    qrels_count = rubric_qrels({"Q": grades}, label="count", min_grade=min_grade)

    lines = rubric_qrels_lines(qrels_max)
    assert lines == sorted(lines, key=lambda line: line.split()[2])
    assert set(qrels_max.get("Q", {})) == set(grades)
    for passage, item_grades in grades.items():
        assert 0 <= qrels_max["Q"][passage] <= 5
        assert qrels_count["Q"][passage] <= len(item_grades)
        # a passage counts items exactly when its best grade reaches min_grade
        assert (qrels_count["Q"][passage] > 0) == (qrels_max["Q"][passage] >= min_grade)


# --- Meta-evaluation ------------------------------------------------------------


def test_leaderboard_agreement_is_tau_b_and_rho_with_average_ranks_over_shared_runs():
    # b and c tie on the Rubric leaderboard; e is only on the official one.
    # tau-b (Kendall 1945, ties): of the 6 pairs, 5 concordant, 0 discordant, 1 tied
    # in x only: (5 - 0) / sqrt((6 - 1) * (6 - 0)) = 5 / sqrt(30).
    # rho: ranks x = (4, 2.5, 2.5, 1), y = (4, 3, 2, 1); deviations from 2.5 are
    # (1.5, 0, 0, -1.5) and (1.5, .5, -.5, -1.5): 4.5 / sqrt(4.5 * 5) = 0.948683.
    rubric = {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}
    official = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "e": 9.0}

    agreement = leaderboard_agreement(rubric, official)

    assert agreement.runs == ("a", "b", "c", "d")
    assert agreement.kendall_tau == pytest.approx(5 / math.sqrt(30))
    assert agreement.spearman == pytest.approx(4.5 / math.sqrt(22.5))
    assert set(agreement.as_json()) == {"kendall_tau", "spearman"}


def test_leaderboard_agreement_needs_two_shared_runs():
    with pytest.raises(ValueError, match=re.escape(NO_COMMON_RUNS.format(n=1))):
        leaderboard_agreement({"a": 1.0, "b": 0.5}, {"a": 2.0, "z": 1.0})


RUBRIC_QRELS = {"Q": {"p1": 5, "p2": 4, "p3": 2, "p4": 0, "p9": 3}}
MANUAL_QRELS = {"Q": {"p1": 2, "p2": 0, "p3": 1, "p4": 0, "p8": 1}, "Z": {"p1": 1}}


@pytest.mark.parametrize(
    ("relevant_level", "kappa"),
    [
        # over p1..p4 (p8, p9 and query Z are judged by one side only). Rubric >= 4:
        # T T F F. Manual >= 2: T F F F; p_o = 3/4, p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2,
        # kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2 (Cohen 1960).
        (2, 0.5),
        # Manual >= 1: T F T F; p_o = 1/2, p_e = 1/2: kappa = 0, chance agreement.
        (1, 0.0),
    ],
)
def test_kappa_compares_binarised_labels_over_passages_both_judged(relevant_level, kappa):
    assert qrels_kappa(RUBRIC_QRELS, MANUAL_QRELS, min_grade=4,
                       relevant_level=relevant_level) == pytest.approx(kappa)


def test_the_grade_by_judgment_table_counts_every_shared_passage():
    assert grade_judgment_table(RUBRIC_QRELS, MANUAL_QRELS) == {
        "0": {"0": 1, "1": 0, "2": 0},  # p4
        "2": {"0": 0, "1": 1, "2": 0},  # p3
        "4": {"0": 1, "1": 0, "2": 0},  # p2
        "5": {"0": 0, "1": 0, "2": 1},  # p1
    }


def test_meta_evaluation_needs_a_passage_both_judged():
    with pytest.raises(ValueError, match=re.escape(NO_COMMON_PASSAGES)):
        qrels_kappa({"Q": {"a": 5}}, {"Q": {"b": 1}})


# --- The catalogue ----------------------------------------------------------------


@pytest.mark.parametrize(("kind", "cover_k", "cover", "label", "value", "n_exam"), [
    ("ranking", 10, "rubric_cover@10", "Rubric-Cover@10", 1 / 2, 2 / 3),
    ("ranking", 2, "rubric_cover@2", "Rubric-Cover@2", 1 / 4, 1 / 3),
    # A response is named by its track's cover_k too, its value over all its segments.
    ("response", 10, "rubric_cover@10", "Rubric-Cover@10", 1 / 2, 2 / 3),
    ("response", 2, "rubric_cover@2", "Rubric-Cover@2", 1 / 2, 2 / 3),
])
def test_the_rubric_leaderboard_is_what_score_rubric_run_computes(
    kind, cover_k, cover, label, value, n_exam
):
    k = catalogue.cover_k_of(kind, cover_k)
    assert k == (None if kind == "response" else cover_k)
    scores = score_rubric_run(rankings=HAND_RUN, grades=HAND_GRADES, items={"Q": ITEMS},
                              qrels=rubric_qrels(HAND_GRADES),
                              pooled={"Q": {"i1", "i2", "i3"}}, cover_k=k, name_k=cover_k)
    measures = catalogue.measures_of(kind, cover_k=cover_k)
    keys = [m.key for m in measures]

    # The API's row keys, in its order, and every one per question; Rubric-Cover named
    # by the track's cover_k.
    assert keys == [cover, "n_exam", "ndcg@10", "map", "recip_rank", "p@10"]
    assert (catalogue.rubric_cover_name(cover_k), measures[0].label) == (cover, label)
    assert catalogue.label_of(cover, cover_k=cover_k) == label
    assert list(scores.leaderboard_row()) == keys
    assert [m.key for m in catalogue.per_question_measures(kind, cover_k=cover_k)] == list(
        scores.per_question())
    assert catalogue.ranking_key(kind, cover_k) == catalogue.statistics_key(kind, cover_k) \
        == cover
    # p1 (2nd) covers i1; p3 (4th) i1 and i3: 2 of 4 items, 2 of 3 pooled in the top 10 or
    # among all segments, 1 in the top 2.
    assert scores.leaderboard_row()[cover] == value
    assert scores.leaderboard_row()["n_exam"] == pytest.approx(n_exam)


def test_the_r2c2_columns_are_unchanged():
    assert [m.key for m in catalogue.measures_of("pr")] == [
        "ndcg@10", "ndcg@20", "q_measure", "nerr@10", "nerr@20", "ms_ndcg@10", "ms_ndcg@20"]
    assert [m.key for m in catalogue.measures_of("ac")] == [
        "accuracy", "nugget_precision", "r_o", "r_u", "hmr", "ece", "brier"]
    assert (catalogue.RANKS_BY["pr"], catalogue.STATISTICS_ON["ac"]) == (
        "ndcg@10", "nugget_precision")
    assert catalogue.label_of("ndcg@10") == "nDCG@10"
