"""A RUBRIC campaign driven as code outside the repo drives it (docs/rubric.md):
tests/data/rubric/campaign.yaml loaded as written, TREC and response runs
uploaded through the API, graded by `manage.py grade`, each self-rating listed by the
judgments API with `qid`, `docid`, `item_id`, `grade`, one post-edited with
`PATCH {"grade", "note"}`, then `manage.py score`: the leaderboard rows, `rubric-qrels/`
and `meta-evaluation/` equal the values worked out by hand below.

Definitions: Rubric-Qrels (label = highest grade over the query's items) and
Rubric-Cover@k from Farzi & Dietz, "Pencils Down!" (ICTIR 2024) section 3; n-EXAM from
Sander & Dietz, "EXAM" (DESIRES 2021); nDCG@10 with graded gains, and MAP, MRR, P@10 at
relevance level min_grade, as trec_eval computes them; Kendall's tau-b, Spearman's rho
and Cohen's kappa as scipy/sklearn define them (kappa: Cohen 1960).

The scripted judge's grades (0..5; 2 where nothing is scripted), items D "Who directed
Alien?", R "When was Alien released?" (q1) and C, the cgi nugget (q2):

    q1  d1: D 5, R 5    d3: D 4, R 0 ("unanswerable")    d2: D 0 ("no answer"), R 1
        KYOTO-llm:q1:1: D 5, R 3 -> post-edited to 4
    q2  d2: C 4    d4: C 2    KYOTO-llm:q2:1: C 5    KYOTO-llm:q2:2: C 2

Track dl (ranking, depth 20, min_grade 4, label max, cover_k 10), two runs in trec_eval's
order (by score): WASEDA-bm25 q1 d1 d3 d2, q2 d4 d2 (a tie at 9.1, docid descending);
KYOTO-bm25 q1 d2 d3, q2 d4.
    Rubric-Qrels: q1 d1 5, d2 1, d3 4; q2 d2 4, d4 2.
    Rubric-Cover@10: WASEDA q1 {D, R} 2/2, q2 {C} 1/1 -> 1;  KYOTO q1 {D} 1/2, q2 0 -> 1/4.
    n-EXAM: every item is covered by some dl run, so the same.
    nDCG@10: ideal q1 5, 4, 1 -> 5 + 4/log2 3 + 1/2;  q2 4, 2 -> 4 + 2/log2 3.
      WASEDA q1 ideal -> 1; q2 d4 d2 = 2 + 4/log2 3.  KYOTO q1 d2 d3 = 1 + 4/log2 3; q2 d4 = 2.
    Relevant at 4: q1 {d1, d3}, q2 {d2}.
      WASEDA AP q1 (1 + 1)/2 = 1, q2 (1/2)/1 -> MAP 3/4; RR 1, 1/2 -> 3/4; P@10 (2 + 1)/20.
      KYOTO  AP q1 (1/2)/2 = 1/4, q2 0 -> MAP 1/8; RR 1/2, 0 -> 1/4; P@10 1/20.
Track gen (response, the defaults: min_grade 4, label max): KYOTO-llm, all its segments.
    Before the edit: q1 {D} 1/2, q2 {C} 1/1 -> Rubric-Cover 3/4; after it q1 {D, R} -> 1.
Meta-evaluation of dl: official leaderboard WASEDA 0.6 > KYOTO 0.4, the Rubric order on
every measure: tau-b = rho = 1. Manual qrels (level 1): q1 d1 1, d3 0, d2 0; q2 d2 1, d4 0.
    Rubric labels >= 4: d1, d3, q2 d2; manual >= 1: d1, q2 d2. Agree on 4 of 5.
    p_o = 4/5; p_e = (3/5)(2/5) + (2/5)(3/5) = 12/25; kappa = (4/5 - 12/25)/(13/25) = 8/13.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from math import log2
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from grading.llm.schemas import RUBRIC_SCHEMA_NAME
from tests.grading.rubric_support import SLUG, ScriptedRubric, grade, movie_rubric, submit
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas

pytestmark = pytest.mark.django_db

API = f"/api/v1/campaigns/{SLUG}"
ALIEN = "Alien (1979) was directed by Ridley Scott."
BLADE = "Ridley Scott later directed Blade Runner."
TOY = "Toy Story (1995) was the first feature film made entirely with computer animation."
KYOTO_Q1 = "Ridley Scott directed Alien, released in 1979. He later directed Blade Runner."
KYOTO_Q2_1 = "Toy Story was the first fully computer-animated feature film."
DIRECTOR, RELEASE = "Who directed Alien?", "When was Alien released?"
CGI = "Toy Story was the first fully computer-animated feature film."
KYOTO_BM25 = b"q1 Q0 d2 1 5 bm25\nq1 Q0 d3 2 4 bm25\nq2 Q0 d4 1 3 bm25\n"

IDEAL_Q1 = 5 + 4 / log2(3) + 1 / 2
IDEAL_Q2 = 4 + 2 / log2(3)
HAND_DL = {
    "WASEDA-bm25": {"rubric_cover@10": 1.0, "n_exam": 1.0,
                    "ndcg@10": (1 + (2 + 4 / log2(3)) / IDEAL_Q2) / 2,
                    "map": 3 / 4, "recip_rank": 3 / 4, "p@10": 3 / 20},
    "KYOTO-bm25": {"rubric_cover@10": 1 / 4, "n_exam": 1 / 4,
                   "ndcg@10": ((1 + 4 / log2(3)) / IDEAL_Q1 + 2 / IDEAL_Q2) / 2,
                   "map": 1 / 8, "recip_rank": 1 / 4, "p@10": 1 / 20},
}
HAND_QRELS = "q1 0 d1 5\nq1 0 d2 1\nq1 0 d3 4\nq2 0 d2 4\nq2 0 d4 2\n"
MANUAL_QRELS = "q1 0 d1 1\nq1 0 d3 0\nq1 0 d2 0\nq2 0 d2 1\nq2 0 d4 0\n"
OFFICIAL = "run,score\nWASEDA-bm25,0.6\nKYOTO-bm25,0.4\n"
CONFUSION = {"1": {"0": 1, "1": 0}, "2": {"0": 1, "1": 0}, "4": {"0": 1, "1": 1},
             "5": {"0": 0, "1": 1}}


@pytest.fixture
def judge() -> Iterator[ScriptedServer[ScriptedRubric]]:
    grades = {(ALIEN, DIRECTOR): (5, "Ridley Scott"), (ALIEN, RELEASE): (5, "1979"),
              (BLADE, DIRECTOR): (4, "Ridley Scott"), (BLADE, RELEASE): (0, "unanswerable"),
              (TOY, DIRECTOR): (0, "no answer"), (TOY, RELEASE): (1, "1995"),
              (TOY, CGI): (4, "the first feature made entirely with computer animation"),
              (KYOTO_Q1, DIRECTOR): (5, "Ridley Scott"), (KYOTO_Q1, RELEASE): (3, "1979"),
              (KYOTO_Q2_1, CGI): (5, "the first fully computer-animated feature film")}
    with ScriptedServer(ScriptedRubric(grades=grades)) as server:
        yield server


def _rows(personas: Personas, track: str) -> dict[str, dict[str, Any]]:
    response = personas.client("organiser").get(f"{API}/leaderboards/")
    assert response.status_code == 200
    [board] = [b for b in response.json()["leaderboards"] if b["track"] == track]
    return {row["run"]: row for row in board["rows"]}


def _score(personas: Personas) -> None:
    call_command("score", SLUG, stdout=io.StringIO())


def test_a_campaign_loaded_from_its_yaml_is_graded_scored_and_meta_evaluated_as_written(
    judge: ScriptedServer[ScriptedRubric], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    personas = movie_rubric()
    submit(personas, "participant_a", "WASEDA-bm25", "dl")
    submit(personas, "participant_b", "KYOTO-bm25", "dl", content=KYOTO_BM25)
    submit(personas, "participant_b", "KYOTO-llm", "gen")
    out = grade(judge)
    assert "WASEDA-bm25: 5 passages, 8 pairs, 8 judge calls" in out, out
    # KYOTO-bm25 retrieves passages WASEDA-bm25 did: graded once per item, no new call.
    assert "KYOTO-bm25: 3 passages, 5 pairs, 0 judge calls" in out, out
    assert judge.judge.count(RUBRIC_SCHEMA_NAME) == 8 + 4
    organiser = personas.client("organiser")

    # Each self-rating, with its fields, as the judgments API lists it.
    listed = organiser.get(f"{API}/judgments/", {"kind": "rubric", "run": "KYOTO-llm",
                                                 "page_size": "100"}).json()["results"]
    by_pair = {(item["qid"], item["docid"], item["item_id"]): item for item in listed}
    release_id = next(item_id for (qid, _, item_id) in by_pair
                      if qid == "q1" and item_id != "q1/director")
    edited = by_pair[("q1", "KYOTO-llm:q1:1", release_id)]
    assert (edited["kind"], edited["grade"], edited["answer"]) == ("rubric", 3, "1979")
    _score(personas)
    # A response's key carries its track's cover_k (the default, 10); the value counts all
    # its segments.
    assert _rows(personas, "gen")["KYOTO-llm"]["rubric_cover@10"] == pytest.approx(3 / 4)

    response = organiser.patch(f"/api/v1/judgments/{edited['id']}/",
                               {"grade": 4, "note": "the segment gives the year"},
                               format="json")
    assert response.status_code == 200, response.json()
    _score(personas)

    dl = _rows(personas, "dl")
    assert set(dl) == set(HAND_DL)
    for run, expected in HAND_DL.items():
        assert dl[run]["team"] == run.split("-")[0]
        for key, value in expected.items():
            assert dl[run][key] == pytest.approx(value, abs=1e-12), (run, key)
    gen = _rows(personas, "gen")["KYOTO-llm"]
    assert (gen["rubric_cover@10"], gen["n_exam"]) == (pytest.approx(1.0), pytest.approx(1.0))

    qrels = organiser.get(f"{API}/rubric-qrels/", {"track": "dl"})
    assert (qrels.status_code, qrels.content.decode()) == (200, HAND_QRELS)

    uploaded = organiser.post(f"{API}/reference/", {
        "track": "dl", "qrels": SimpleUploadedFile("manual.qrels", MANUAL_QRELS.encode()),
        "leaderboard": SimpleUploadedFile("official.csv", OFFICIAL.encode())},
        format="multipart")
    assert uploaded.status_code == 201, uploaded.json()
    meta = organiser.get(f"{API}/meta-evaluation/", {"track": "dl"}).json()
    assert set(meta["correlation"]) == set(HAND_DL["WASEDA-bm25"])
    for measure, agreement in meta["correlation"].items():
        assert (agreement["kendall_tau"], agreement["spearman"]) == (
            pytest.approx(1.0), pytest.approx(1.0)), measure
    assert meta["kappa"] == pytest.approx(8 / 13, abs=1e-12)
    assert meta["confusion"] == CONFUSION
