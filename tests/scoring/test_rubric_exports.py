"""Exports of a ranking track: the leaderboard CSV and LaTeX
with the RUBRIC columns, and the graded pool in the Autograding Workbench's JSONL data
model (one `[query_id, [paragraph, ...]]` line per query), for organisers."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client

from scoring.services import campaign_score
from tests.scoring.rubric_case import CORPUS_TEXT, RubricCase, rubric_case
from tests.support import Personas, signed_in

GRADED = "/api/v1/campaigns/toy/exports/graded.jsonl?track=dl"


@pytest.fixture
def scored_case(personas: Personas) -> RubricCase:
    case = rubric_case(personas)
    campaign_score(campaign=personas.campaign)
    return case


def test_the_csv_has_the_rubric_columns_and_settings_full_precision(
    personas: Personas, scored_case: RubricCase
) -> None:
    response = personas.client("organiser").get("/api/v1/campaigns/toy/leaderboards/?format=csv")
    header, *rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert header == ["track", "run", "team", "rubric_cover@10", "n_exam", "ndcg@10", "map",
                      "recip_rank", "p@10", "computed_at", "judge", "min_grade", "label",
                      "cover_k", "depth"]
    kyoto = dict(zip(header, next(row for row in rows if row[1] == "KYOTO-R1"), strict=True))
    # tests/scoring/test_rubric_leaderboards.py works these out by hand.
    assert (kyoto["rubric_cover@10"], kyoto["n_exam"], kyoto["map"], kyoto["p@10"]) == (
        "0.25", "0.25", "0.25", "0.05")
    assert (kyoto["judge"], kyoto["min_grade"], kyoto["label"], kyoto["cover_k"],
            kyoto["depth"]) == ("scripted-judge (rubric-v1)", "4", "max", "10", "3")


def test_the_latex_table_has_the_rubric_columns_and_settings(
    personas: Personas, scored_case: RubricCase
) -> None:
    tex = personas.client("organiser").get(
        "/api/v1/campaigns/toy/exports/leaderboards.tex").content.decode()
    lines = tex.splitlines()
    assert ("\\# & Run & Rubric-Cover@10 & n-EXAM & nDCG@10 & MAP & MRR & P@10 & $>$ (HSD) "
            "\\\\") in lines
    # Ranked by Rubric-Cover@10; MRR 1 and 0.5, P@10 0.15 and 0.05 (by hand).
    assert any(line.startswith("1 & WASEDA-R1 & 0.7500 & 1.0000 & ")
               and line.endswith(" & 0.9167 & 1.0000 & 0.1500 & -- \\\\") for line in lines)
    assert any(line.startswith("2 & KYOTO-R1 & 0.2500 & 0.2500 & ") for line in lines)
    assert "min\\_grade = 4; label = max; cover\\_k = 10; depth = 3" in tex


def _graded(client: Any) -> tuple[Any, list[str]]:
    response = client.get(GRADED)
    if response.status_code != 200:
        return response, []
    body = b"".join(response.streaming_content).decode()
    return response, body.splitlines(keepends=True)


def test_the_graded_pool_comes_in_the_workbench_data_model(
    personas: Personas, scored_case: RubricCase
) -> None:
    response, lines = _graded(personas.client("organiser"))
    assert response.status_code == 200
    assert response.streaming  # one query at a time, never the whole pool at once
    assert response["Content-Disposition"] == 'attachment; filename="toy-dl-graded.jsonl"'
    queries = {}
    for line in lines:
        # Each line round-trips through json unchanged.
        assert json.dumps(json.loads(line), ensure_ascii=False) + "\n" == line
        qid, paragraphs = json.loads(line)
        queries[qid] = {p["paragraph_id"]: p for p in paragraphs}

    # The pool: the top 3 of each run (d8 is fourth in WASEDA-R1's D001).
    assert {qid: sorted(p) for qid, p in queries.items()} == {
        "D001": ["d1", "d2", "d3", "d4"], "D002": ["d5", "d6", "d7"], "D003": ["d9"]}
    d3 = queries["D001"]["d3"]
    assert d3["text"] == CORPUS_TEXT.format(n=3)
    assert d3["paragraph_data"] == {"judgments": [], "rankings": [
        {"method": "KYOTO-R1", "paragraphId": "d3", "queryId": "D001", "rank": 1,
         "score": 9.0},
        {"method": "WASEDA-R1", "paragraphId": "d3", "queryId": "D001", "rank": 3,
         "score": 7.0},
    ]}
    a, b = scored_case.item_id("A"), scored_case.item_id("B")
    (exam,) = d3["exam_grades"]  # one judge, one prompt, one target
    assert exam["correctAnswered"] == [b]  # B graded 4 >= min_grade 4; A graded 3
    assert exam["wrongAnswered"] == [a]
    assert sorted(map(tuple, exam["answers"])) == sorted([(a, "d3 on A"), (b, "d3 on B")])
    assert sorted((r["question_id"], r["self_rating"]) for r in exam["self_ratings"]) == \
        sorted([(a, 3), (b, 4)])
    assert (exam["llm"], exam["prompt_type"], exam["exam_ratio"],
            exam["relevance_label"]) == ("scripted-judge", "question", 0.5, 4)
    assert exam["prompt_info"] == {"prompt_class": "rubric-v1", "is_self_rated": True}
    # Nuggets are named by nugget_id, as the workbench names them.
    (d5,) = queries["D002"]["d5"]["exam_grades"]
    assert {r["nugget_id"]: r["self_rating"] for r in d5["self_ratings"]} == {
        scored_case.item_id("C"): 4, scored_case.item_id("E"): 3}
    assert d5["prompt_type"] == "nugget"
    # A passage of a query without items has no grades.
    assert "exam_grades" not in queries["D003"]["d9"]


def test_an_organisers_edit_shows_in_the_export(
    personas: Personas, scored_case: RubricCase
) -> None:
    judgment = scored_case.judgments["d4", "A"]
    judgment.edited_label = {"grade": 5, "answer": "Ridley Scott"}
    judgment.save()
    _, lines = _graded(personas.client("organiser"))
    paragraphs = {p["paragraph_id"]: p for p in json.loads(lines[0])[1]}
    (exam,) = paragraphs["d4"]["exam_grades"]
    assert exam["correctAnswered"] == [scored_case.item_id("A")]
    assert exam["llm_options"]["edited"] == [scored_case.item_id("A")]
    assert [scored_case.item_id("A"), "Ridley Scott"] in exam["answers"]


@pytest.mark.parametrize("who", ["participant_a", "outsider"])
def test_no_one_but_organisers_downloads_the_graded_pool(
    personas: Personas, scored_case: RubricCase, who: str
) -> None:
    response, lines = _graded(personas.client(who))
    assert response.status_code == 404  # as every organiser export answers: as if missing
    assert lines == []


def test_the_graded_pool_needs_a_ranking_or_response_track(
    personas: Personas, scored_case: RubricCase
) -> None:
    response = personas.client("organiser").get(
        "/api/v1/campaigns/toy/exports/graded.jsonl")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "track"


def test_the_results_page_shows_the_rubric_leaderboard_and_its_downloads(
    personas: Personas, scored_case: RubricCase
) -> None:
    page = signed_in(personas, "organiser").get("/campaigns/toy/results/").content.decode()
    assert 'data-label="Rubric-Cover@10"' in page and "WASEDA-R1" in page
    assert "Grade threshold (min_grade)" in page
    assert "/api/v1/campaigns/toy/rubric-qrels/?track=dl" in page
    assert "/api/v1/campaigns/toy/exports/graded.jsonl?track=dl" in page
    drill_down = signed_in(personas, "organiser").get(
        "/campaigns/toy/results/KYOTO-R1/").content.decode()
    assert 'data-label="n-EXAM"' in drill_down


def test_participants_see_no_graded_pool_link_after_publication(
    personas: Personas, scored_case: RubricCase
) -> None:
    personas.client("organiser").post("/api/v1/campaigns/toy/leaderboards/dl/publish/", {},
                                      format="json")
    client: Client = signed_in(personas, "participant_a")
    page = client.get("/campaigns/toy/results/").content.decode()
    assert "/api/v1/campaigns/toy/rubric-qrels/?track=dl" in page
    assert "graded.jsonl" not in page


def test_a_snapshots_settings_read_back_in_their_own_order_whatever_the_database_kept() -> None:
    # PostgreSQL's jsonb sorts keys by length ("depth", "label", "cover_k", "min_grade");
    # the CSV columns and the LaTeX caption must not follow it.
    from scoring.leaderboard import PARAMS, params_in_order

    stored = {"depth": 3, "label": "max", "cover_k": 10, "min_grade": 4, "extra": 1}
    assert list(params_in_order(stored)) == [*PARAMS, "extra"]
    assert params_in_order(stored) == stored
