"""A ranking track's leaderboard after `manage.py score`, against numbers worked out by
hand from the definitions of docs/measures.md and their sources: Rubric-Qrels and
Rubric-Cover from Farzi & Dietz, "Pencils Down!" (ICTIR 2024) section 3; n-EXAM from
Sander & Dietz, "EXAM" (DESIRES 2021); nDCG@10, MAP, MRR and P@10 as trec_eval defines
them (graded gains for nDCG, the relevance level `min_grade` for the binary three).
The case is tests/scoring/rubric_case.py."""

from __future__ import annotations

import io
from math import log2
from typing import Any

import pytest
from django.core.management import call_command

from grading.models import Judgment, JudgmentKind, JudgmentStatus, PassageItemGrade
from scoring.models import Evaluation
from scoring.services import campaign_score
from submissions.models import RankedPassage, Run, RunStatus
from tests.factories import TrackFactory
from tests.scoring.rubric_case import rubric_case
from tests.scoring.support import boards
from tests.support import Personas

ROW_KEYS = {"run", "team", "rubric_cover@10", "n_exam", "ndcg@10", "map", "recip_rank",
            "p@10"}

# label max, min_grade 4. Labels (highest grade): d1 5, d2 1, d3 4, d4 0; d5 4, d6 2,
# d7 0 (d8 is below depth 3 in every run: not in the pool, not in the qrels).
# Items at grade >= 4: D001 A (d1), B (d3); D002 C (d5); E never.
#
# Rubric-Cover@10 = |items covered in the top 10| / |items|, mean over D001, D002:
#   WASEDA: D001 {A, B} 2/2, D002 {C} 1/2 -> (1 + 1/2) / 2 = 0.75
#   KYOTO:  D001 {B} 1/2, D002 {} 0/2      -> (1/2 + 0) / 2 = 0.25
# n-EXAM: the same over the items some run covers (D001 {A, B}, D002 {C}):
#   WASEDA: (2/2 + 1/1) / 2 = 1;  KYOTO: (1/2 + 0/1) / 2 = 0.25
# nDCG@10, gain = label, discount log2(rank + 1), ideal = the qrels' labels sorted:
#   D001 ideal 5, 4, 1, 0: 5 + 4/log2 3 + 1/2;  D002 ideal 4, 2, 0: 4 + 2/log2 3
#   WASEDA: D001 d1 d2 d3 = 5 + 1/log2 3 + 4/2; D002 d5 d6 = the ideal, 1
#   KYOTO:  D001 d3 d4 = 4;                     D002 d6 d7 = 2
# MAP, MRR, P@10 with relevant = label >= 4: D001 {d1, d3}, D002 {d5}:
#   WASEDA AP: D001 (1/1 + 2/3) / 2 = 5/6, D002 1 -> MAP 11/12; RR 1, 1; P@10 2/10, 1/10
#   KYOTO AP:  D001 (1/1) / 2 = 1/2, D002 0 -> MAP 1/4; RR 1, 0; P@10 1/10, 0
IDEAL_D001 = 5 + 4 / log2(3) + 1 / 2
IDEAL_D002 = 4 + 2 / log2(3)
HAND_MAX = {
    "WASEDA-R1": {"rubric_cover@10": 0.75, "n_exam": 1.0,
                  "ndcg@10": ((5 + 1 / log2(3) + 4 / 2) / IDEAL_D001 + 1) / 2,
                  "map": 11 / 12, "recip_rank": 1.0, "p@10": 0.15},
    "KYOTO-R1": {"rubric_cover@10": 0.25, "n_exam": 0.25,
                 "ndcg@10": (4 / IDEAL_D001 + 2 / IDEAL_D002) / 2,
                 "map": 1 / 4, "recip_rank": 0.5, "p@10": 0.05},
}

# label count, min_grade 2. Labels (items at grade >= 2): d1 2, d2 0, d3 2, d4 0; d5 2,
# d6 1, d7 0. Items at grade >= 2: D001 A (d1, d3), B (d1, d3); D002 C (d5, d6), E (d5).
#   Cover: WASEDA (2/2 + 2/2) / 2 = 1; KYOTO (2/2 + 1/2) / 2 = 0.75 (d6 covers C only)
#   n-EXAM: every item is covered by some run, so the same as the cover.
#   nDCG@10: D001 ideal 2, 2: 2 + 2/log2 3; D002 ideal 2, 1: 2 + 1/log2 3
#     WASEDA: D001 2 + 0 + 2/2 = 3, D002 ideal; KYOTO: D001 2, D002 d6 d7 = 1
#   Relevant at level 2 (trec_eval -l 2, labels read literally): D001 {d1, d3}, D002 {d5}:
#     the same MAP, MRR and P@10 as above.
HAND_COUNT = {
    "WASEDA-R1": {"rubric_cover@10": 1.0, "n_exam": 1.0,
                  "ndcg@10": (3 / (2 + 2 / log2(3)) + 1) / 2,
                  "map": 11 / 12, "recip_rank": 1.0, "p@10": 0.15},
    "KYOTO-R1": {"rubric_cover@10": 0.75, "n_exam": 0.75,
                 "ndcg@10": (2 / (2 + 2 / log2(3)) + 1 / (2 + 1 / log2(3))) / 2,
                 "map": 1 / 4, "recip_rank": 0.5, "p@10": 0.05},
}


def _score(personas: Personas) -> None:
    call_command("score", personas.campaign.slug, stdout=io.StringIO())


def _rows(personas: Personas) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    board = boards(personas, "organiser")["dl"]
    return board, {row["run"]: row for row in board["rows"]}


def _assert_hand_values(rows: dict[str, dict[str, Any]],
                        hand: dict[str, dict[str, float]]) -> None:
    assert set(rows) == set(hand)
    for run, expected in hand.items():
        for key, value in expected.items():
            assert rows[run][key] == pytest.approx(value, abs=1e-12), (run, key)


def test_the_leaderboard_rows_equal_the_hand_computed_values(personas: Personas) -> None:
    case = rubric_case(personas)
    _score(personas)
    board, rows = _rows(personas)

    assert [row["run"] for row in board["rows"]] == ["WASEDA-R1", "KYOTO-R1"]
    for row in board["rows"]:
        assert set(row) >= ROW_KEYS
    assert rows["KYOTO-R1"]["team"] == "KYOTO"
    _assert_hand_values(rows, HAND_MAX)
    # Beside the rows: the judge, and the settings the numbers depend on.
    assert board["kind"] == "ranking"
    assert board["judge"] == "scripted-judge (rubric-v1)"
    assert (board["min_grade"], board["label"], board["cover_k"], board["depth"]) == (
        4, "max", 10, 3)
    assert board["questions"] == 2  # D001 and D002 have items; D003 none
    assert case.runs["WASEDA-R1"].status == RunStatus.GRADED
    assert Run.objects.get(pk=case.runs["WASEDA-R1"].pk).status == RunStatus.SCORED


def test_the_count_label_scores_on_items_at_the_threshold(personas: Personas) -> None:
    rubric_case(personas, label="count", min_grade=2)
    _score(personas)
    board, rows = _rows(personas)
    _assert_hand_values(rows, HAND_COUNT)
    assert (board["min_grade"], board["label"]) == (2, "count")


def test_per_question_scores_cis_and_the_hsd_come_as_for_r2c2(personas: Personas) -> None:
    case = rubric_case(personas)
    (evaluation,) = campaign_score(campaign=personas.campaign)
    kyoto = evaluation.scores.get(run=case.runs["KYOTO-R1"])
    # Per query, as the comments above work them out.
    assert kyoto.per_question["rubric_cover@10"] == {"D001": 0.5, "D002": 0.0}
    assert kyoto.per_question["n_exam"] == {"D001": 0.5, "D002": 0.0}
    assert kyoto.per_question["map"] == {"D001": 0.5, "D002": 0.0}

    statistics = evaluation.statistics
    assert statistics["measure"] == "rubric_cover@10"
    intervals = statistics["intervals"]["rubric_cover@10"]
    # The interval's mean is the leaderboard's mean: the matrix is over D001 and D002.
    assert intervals["WASEDA-R1"]["mean"] == pytest.approx(0.75, abs=1e-12)
    assert intervals["KYOTO-R1"]["mean"] == pytest.approx(0.25, abs=1e-12)
    (pair,) = statistics["hsd"]
    assert {pair["a"], pair["b"]} == {"WASEDA-R1", "KYOTO-R1"}
    assert abs(pair["difference"]) == pytest.approx(0.5, abs=1e-12)
    assert statistics["hsd_permutations"] == 5000
    # Two queries, two runs: swapping the runs' scores within each query gives 4
    # equally likely outcomes of the mean difference (+0.5, -0.5, 0, 0), 2 of which
    # reach |0.5|: the exact p is 1/2. B = 5000 draws estimate it with a standard
    # error of sqrt(0.25 / 5000) = 0.0071; 0.03 is over 4 of them.
    assert pair["p_value"] == pytest.approx(0.5, abs=0.03)
    assert statistics["anova"]["f_system"] is None  # a zero residual: no F test


def test_a_snapshot_records_qrels_settings_and_the_same_fingerprint_again(
    personas: Personas
) -> None:
    rubric_case(personas)
    first, = campaign_score(campaign=personas.campaign)
    again, = campaign_score(campaign=personas.campaign)
    assert first.params == {"min_grade": 4, "label": "max", "cover_k": 10, "depth": 3}
    assert first.qrels["D001"] == {"d1": 5, "d2": 1, "d3": 4, "d4": 0}
    assert "D003" not in first.qrels
    assert first.fingerprint == again.fingerprint
    assert Evaluation.objects.filter(track__slug="dl").count() == 2


def test_an_edited_grade_wins_and_counts_as_edited(personas: Personas) -> None:
    case = rubric_case(personas)
    # An organiser says d4 answers A fully: KYOTO now covers A and B on D001.
    judgment = case.judgments["d4", "A"]
    judgment.edited_label = {"grade": 5, "answer": "Ridley Scott"}
    judgment.save()
    _score(personas)
    board, rows = _rows(personas)
    assert rows["KYOTO-R1"]["rubric_cover@10"] == pytest.approx((1 + 0) / 2, abs=1e-12)
    assert board["edited_judgments"] == 1


def test_a_run_not_graded_yet_is_not_on_the_leaderboard(personas: Personas) -> None:
    case = rubric_case(personas)
    Run.objects.filter(pk=case.runs["KYOTO-R1"].pk).update(status=RunStatus.VALID)
    _score(personas)
    _, rows = _rows(personas)
    assert set(rows) == {"WASEDA-R1"}
    # n-EXAM pools the graded runs only: WASEDA covers all that is covered.
    assert rows["WASEDA-R1"]["n_exam"] == pytest.approx(1.0, abs=1e-12)


def test_a_reply_that_never_parsed_counts_as_grade_1_and_waits_for_review(
    personas: Personas
) -> None:
    case = rubric_case(personas)
    judgment = case.judgments["d7", "C"]
    judgment.llm_label = None  # the judge's reply never parsed
    judgment.save()
    evaluation, = campaign_score(campaign=personas.campaign)
    assert evaluation.needs_review == 1
    assert evaluation.qrels["D002"]["d7"] == 1  # max(1, E's 0): label max


def test_a_response_counts_all_its_segments_whatever_cover_k_and_depth(
    personas: Personas
) -> None:
    case = rubric_case(personas)
    gen = TrackFactory.create(campaign=personas.campaign, slug="gen", kind="response",
                              answer_check="none", depth=1, cover_k=1,
                              own_due=case.track.own_due)
    run = Run.objects.create(track=gen, team=case.runs["KYOTO-R1"].team, name="KYOTO-G1",
                             sha256="1" * 64, size=1, status=RunStatus.GRADED,
                             is_current=True)
    segments = {1: {"A": 0, "B": 0}, 2: {"A": 5, "B": 1}}  # A answered by segment 2
    for rank, by_letter in segments.items():
        docid = f"KYOTO-G1:D001:{rank}"
        RankedPassage.objects.create(run=run, qid="D001", rank=rank, docid=docid,
                                     text=f"Segment {rank}.")
        for letter, grade in by_letter.items():
            item = case.items[letter]
            judgment = Judgment.objects.create(
                campaign=personas.campaign, kind=JudgmentKind.RUBRIC, judge_model="j",
                prompt_version="rubric-v1", input_hash=f"{docid}-{letter}", input={},
                status=JudgmentStatus.DONE, llm_label={"grade": grade, "answer": ""})
            PassageItemGrade.objects.create(campaign=personas.campaign, qid="D001",
                                            docid=docid, item=item,
                                            item_text_hash=item.text_hash, judgment=judgment)
    _score(personas)
    board = boards(personas, "organiser")["gen"]
    (row,) = board["rows"]
    # D001: A covered (segment 2, beyond cover_k 1 and depth 1), B not: 1/2; D002: no
    # response, 0/2. Mean over the queries with items: (1/2 + 0) / 2.
    # Its key carries the track's cover_k, 1, though the value counts every segment.
    assert row["rubric_cover@1"] == pytest.approx(0.25, abs=1e-12)
    assert (board["kind"], board["cover_k"]) == ("response", 1)
    assert "rubric_cover" not in row and "rubric_cover@10" not in row
    # Its qrels hold its own segments only, not the ranking track's passages.
    assert Evaluation.objects.get(track=gen).qrels == {
        "D001": {"KYOTO-G1:D001:1": 0, "KYOTO-G1:D001:2": 5}}
