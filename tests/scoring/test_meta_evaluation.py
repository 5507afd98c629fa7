"""Meta-evaluation (docs/rubric.md): organisers upload manual qrels and/or an
official leaderboard of a ranking track (`POST .../reference/`); `GET
.../meta-evaluation/?track=SLUG` sets the latest snapshot against them: Kendall's tau-b
and Spearman's rho per leaderboard measure, Cohen's kappa of the binarised labels and
the grade x judgment table of "Pencils Down!" (Farzi & Dietz, ICTIR 2024) Table 5.

The case is tests/scoring/rubric_case.py (label max, min_grade 4) with a third run,
NII-R1 (D001: d2 d4; D002: d7), whose passages are all in the pool already, so the
Rubric-Qrels stay those of the case:

    D001  d1 5   d2 1   d3 4   d4 0        D002  d5 4   d6 2   d7 0

The Rubric leaderboard (tests/scoring/test_rubric_leaderboards.py works out WASEDA and
KYOTO): NII-R1 covers no item at grade >= 4 and retrieves no passage labelled >= 4, so
it scores 0 on every measure but nDCG@10 (d2's gain 1 at rank 1 of D001: 1/IDEAL_D001
over 2 queries, about 0.06), which is still below KYOTO's. Every measure ranks
WASEDA > KYOTO > NII.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from campaign.api import CAMPAIGN_NOT_FOUND
from campaign.models import Team
from scoring.meta_api import NEITHER_FILE
from scoring.meta_selectors import NO_REFERENCE, NOT_SCORED
from scoring.models import ManualReference
from scoring.reference_services import INVALID_REFERENCE, TOO_LARGE
from scoring.serializers import TRACK_NOT_RUBRIC, TRACK_UNKNOWN
from scoring.services import campaign_score
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.official_leaderboard import BAD_HEADER, BAD_SCORE, DUPLICATE_RUN
from submissions.formats.trec_qrels import (
    BAD_LEVEL,
    DUPLICATE_JUDGMENT,
    TREC_QRELS_FIELD_COUNT,
    UNKNOWN_QUERY,
)
from submissions.models import RankedPassage, Run, RunStatus
from tests.factories import TrackFactory
from tests.scoring.rubric_case import rubric_case
from tests.support import Personas

REFERENCE = "/api/v1/campaigns/toy/reference/"
META = "/api/v1/campaigns/toy/meta-evaluation/?track=dl"
MEASURES = ["rubric_cover@10", "n_exam", "ndcg@10", "map", "recip_rank", "p@10"]

# The official leaderboard puts KYOTO above WASEDA; CMU-R1 is not on ours, so it is left
# out. Over WASEDA, KYOTO, NII, the Rubric order is W > K > N and the official K > W > N:
#   tau-b: pairs (W, K) discordant, (W, N) and (K, N) concordant, no ties:
#          (2 - 1) / 3 = 1/3 (Kendall 1938; tau-b = tau-a without ties).
#   rho:   ranks (W, K, N) Rubric (3, 2, 1), official (2, 3, 1): d = (1, 1, 0),
#          1 - 6 * 2 / (3 * (9 - 1)) = 1/2 (Spearman 1904).
OFFICIAL = "run,score\nKYOTO-R1,0.6\nWASEDA-R1,0.5\nNII-R1,0.1\nCMU-R1,0.9\n"

# Manual qrels: D001 d8 and D003 d9 are not in the Rubric-Qrels, so left out; seven
# passages are judged by both.
MANUAL_QRELS = """\
D001 0 d1 2
D001 0 d2 1
D001 0 d3 0
D001 0 d4 0
D001 0 d8 2
D002 0 d5 1
D002 0 d6 1
D002 0 d7 0
D003 0 d9 1
"""
# Kappa at relevant_level 1. Rubric >= 4: d1 d3 d5 relevant (3 of 7); manual >= 1: d1 d2
# d5 d6 (4 of 7). Agreeing: d1, d5 (both yes), d4, d7 (both no): p_o = 4/7.
# p_e = (3/7)(4/7) + (4/7)(3/7) = 24/49; kappa = (28/49 - 24/49) / (25/49) = 4/25
# (Cohen 1960, as `scoring.measures.stats.cohen_kappa`).
KAPPA_LEVEL_1 = 4 / 25
# At relevant_level 2 only d1 is relevant by hand: agreeing d1, d2, d4, d6, d7: p_o = 5/7;
# p_e = (3/7)(1/7) + (4/7)(6/7) = 27/49; kappa = (35/49 - 27/49) / (22/49) = 4/11.
KAPPA_LEVEL_2 = 4 / 11
# "Pencils Down!" Table 5: Rubric label (rows) x manual level (columns), every passage
# both judge counted once: d4, d7 (0, 0); d2 (1, 1); d6 (2, 1); d3 (4, 0); d5 (4, 1);
# d1 (5, 2).
CONFUSION = {
    "0": {"0": 2, "1": 0, "2": 0},
    "1": {"0": 0, "1": 1, "2": 0},
    "2": {"0": 0, "1": 1, "2": 0},
    "4": {"0": 1, "1": 1, "2": 0},
    "5": {"0": 0, "1": 0, "2": 1},
}


def _with_third_run(personas: Personas) -> None:
    case = rubric_case(personas)
    team = Team.objects.create(campaign=personas.campaign, name="NII")
    run = Run.objects.create(track=case.track, team=team, name="NII-R1",
                             sha256=hashlib.sha256(b"NII-R1").hexdigest(), size=1,
                             status=RunStatus.GRADED, is_current=True,
                             graded_at=timezone.now())
    RankedPassage.objects.bulk_create(
        RankedPassage(run=run, qid=qid, rank=rank, docid=docid, score=10.0 - rank)
        for qid, docids in {"D001": ["d2", "d4"], "D002": ["d7"]}.items()
        for rank, docid in enumerate(docids, 1))


def _scored_case(personas: Personas) -> None:
    _with_third_run(personas)
    (evaluation,) = campaign_score(campaign=personas.campaign)
    assert evaluation.qrels == {"D001": {"d1": 5, "d2": 1, "d3": 4, "d4": 0},
                                "D002": {"d5": 4, "d6": 2, "d7": 0}}
    ranks = {score.run.name: score.aggregates for score in evaluation.scores.all()}
    for measure in MEASURES:  # the order the hand computation rests on
        assert ranks["WASEDA-R1"][measure] > ranks["KYOTO-R1"][measure] \
            > ranks["NII-R1"][measure], measure


def _files(**files: str | bytes) -> dict[str, Any]:
    return {name: SimpleUploadedFile(f"{name}.txt", content.encode()
                                     if isinstance(content, str) else content)
            for name, content in files.items()}


def _upload(personas: Personas, who: str = "organiser", *, track: str = "dl",
            **fields: Any) -> Any:
    data = {"track": track, **fields}
    return personas.client(who).post(REFERENCE, data, format="multipart")


def _meta(personas: Personas, who: str = "organiser", url: str = META) -> Any:
    return personas.client(who).get(url)


def test_the_figures_equal_the_hand_computed_ones(personas: Personas) -> None:
    _scored_case(personas)
    uploaded = _upload(personas, **_files(qrels=MANUAL_QRELS, leaderboard=OFFICIAL))
    assert uploaded.status_code == 201, uploaded.json()
    assert uploaded.json()["qrels"]["judgments"] == 9
    assert uploaded.json()["leaderboard"]["runs"] == 4

    response = _meta(personas)

    assert response.status_code == 200
    body = response.json()
    assert list(body["correlation"]) == MEASURES  # one per leaderboard measure
    for measure, agreement in body["correlation"].items():
        assert agreement["kendall_tau"] == pytest.approx(1 / 3, abs=1e-12), measure
        assert agreement["spearman"] == pytest.approx(1 / 2, abs=1e-12), measure
    assert body["runs"] == ["KYOTO-R1", "NII-R1", "WASEDA-R1"]
    assert body["kappa"] == pytest.approx(KAPPA_LEVEL_1, abs=1e-12)
    assert body["confusion"] == CONFUSION
    assert body["passages"] == 7
    assert (body["min_grade"], body["relevant_level"]) == (4, 1)


def test_ties_make_it_tau_b_with_average_ranks_and_the_level_moves_kappa(
    personas: Personas
) -> None:
    _scored_case(personas)
    # The official leaderboard ties WASEDA and KYOTO. tau-b: 2 concordant pairs, 0
    # discordant, of 3 pairs one tied in the official scores only:
    #   (2 - 0) / sqrt((3 - 0) (3 - 1)) = 2 / sqrt 6 (tau-a would be 2/3).
    # rho, average ranks: Rubric (3, 2, 1), official (2.5, 2.5, 1); deviations from the
    # mean 2: (1, 0, -1) and (.5, .5, -1): 1.5 / sqrt(2 * 1.5) = sqrt(3) / 2.
    tied = "run,score\nWASEDA-R1,0.5\nKYOTO-R1,0.5\nNII-R1,0.1\n"
    assert _upload(personas, relevant_level=2,
                   **_files(qrels=MANUAL_QRELS, leaderboard=tied)).status_code == 201

    body = _meta(personas).json()

    for agreement in body["correlation"].values():
        assert agreement["kendall_tau"] == pytest.approx(2 / math.sqrt(6), abs=1e-12)
        assert agreement["spearman"] == pytest.approx(math.sqrt(3) / 2, abs=1e-12)
    assert body["kappa"] == pytest.approx(KAPPA_LEVEL_2, abs=1e-12)
    assert body["confusion"] == CONFUSION  # the table does not depend on the level
    assert body["relevant_level"] == 2


@pytest.mark.parametrize("official", [
    "run,score\nWASEDA-R1,0.5\nCMU-R1,0.9\n",  # one shared run
    "run,score\nWASEDA-R1,0.5\nKYOTO-R1,0.5\nNII-R1,0.5\n",  # no ranking
])
def test_a_correlation_without_two_ranked_shared_runs_is_null(
    personas: Personas, official: str
) -> None:
    _scored_case(personas)
    assert _upload(personas, **_files(leaderboard=official)).status_code == 201

    body = _meta(personas).json()

    assert body["correlation"] == {measure: None for measure in MEASURES}
    # A reference of a leaderboard only: nothing to compare labels with.
    assert (body["kappa"], body["confusion"], body["passages"]) == (None, None, None)


def test_qrels_alone_give_kappa_and_the_table_but_no_correlation(personas: Personas) -> None:
    _scored_case(personas)
    assert _upload(personas, **_files(qrels=MANUAL_QRELS)).status_code == 201
    body = _meta(personas).json()
    assert body["correlation"] is None
    assert body["kappa"] == pytest.approx(KAPPA_LEVEL_1, abs=1e-12)
    assert body["confusion"] == CONFUSION


def test_qrels_that_share_no_passage_give_no_kappa(personas: Personas) -> None:
    _scored_case(personas)
    assert _upload(personas, **_files(qrels="D003 0 d9 1\n")).status_code == 201
    body = _meta(personas).json()
    assert (body["kappa"], body["confusion"], body["passages"]) == (None, {}, 0)


def test_it_says_which_is_missing_a_snapshot_or_a_reference(personas: Personas) -> None:
    _with_third_run(personas)
    both = _meta(personas)
    assert both.status_code == 404
    assert both.json()["detail"] == "; ".join([
        NOT_SCORED.format(track="dl", slug="toy"), NO_REFERENCE.format(track="dl", slug="toy")])

    assert _upload(personas, **_files(leaderboard=OFFICIAL)).status_code == 201
    unscored = _meta(personas)
    assert unscored.status_code == 404
    assert unscored.json()["detail"] == NOT_SCORED.format(track="dl", slug="toy")

    ManualReference.objects.all().delete()
    campaign_score(campaign=personas.campaign)
    unreferenced = _meta(personas)
    assert unreferenced.status_code == 404
    assert unreferenced.json()["detail"] == NO_REFERENCE.format(track="dl", slug="toy")


def test_a_new_upload_replaces_the_reference_and_the_old_one_stays_on_record(
    personas: Personas
) -> None:
    _scored_case(personas)
    first = _upload(personas, **_files(qrels=MANUAL_QRELS, leaderboard=OFFICIAL))
    assert first.status_code == 201
    # The second brings a leaderboard only, which agrees with ours exactly: it is the
    # reference now, whole; the first one's qrels no longer count.
    agreeing = "run,score\nWASEDA-R1,3\nKYOTO-R1,2\nNII-R1,1\n"
    second = _upload(personas, **_files(leaderboard=agreeing))
    assert second.status_code == 201

    body = _meta(personas).json()

    assert body["reference"]["id"] == second.json()["id"]
    assert {a["kendall_tau"] for a in body["correlation"].values()} == {1.0}
    assert body["kappa"] is None
    old, new = ManualReference.objects.order_by("id")
    assert old.replaced_at is not None and old.replaced_at == new.uploaded_at
    assert new.replaced_at is None
    assert old.qrels is not None and old.qrels["D001"]["d1"] == 2  # what was uploaded
    assert (old.uploaded_by, new.uploaded_by) == (personas.organiser, personas.organiser)
    assert body["reference"]["uploaded_by"] == "olga"


# --- bad uploads: every problem named by its file and line, nothing stored -------------

BAD_QRELS = """\
D001 0 d1 2
D001 0 d2
D009 0 d3 1
D001 0 d4 high
# a comment, as trec_eval allows

D001 0 d1 1
D002 0 d5 200
"""
BAD_LEADERBOARD = "run,points\nWASEDA-R1,0.5\nKYOTO-R1,nan\nWASEDA-R1,0.7\n"


def test_every_bad_line_of_either_file_is_named_and_nothing_is_stored(
    personas: Personas
) -> None:
    _scored_case(personas)
    before = _upload(personas, **_files(leaderboard=OFFICIAL)).json()["id"]

    response = _upload(personas, **_files(qrels=BAD_QRELS, leaderboard=BAD_LEADERBOARD))

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors == [
        {"field": "qrels.line", "line": 2, "message": TREC_QRELS_FIELD_COUNT.format(3)},
        {"field": "qrels.qid", "line": 3, "message": UNKNOWN_QUERY.format("D009")},
        {"field": "qrels.rel", "line": 4, "message": BAD_LEVEL.format("high")},
        {"field": "qrels.docid", "line": 7,
         "message": DUPLICATE_JUDGMENT.format("d1", "D001", 1)},
        {"field": "qrels.rel", "line": 8, "message": BAD_LEVEL.format("200")},
        {"field": "leaderboard.header", "line": 1,
         "message": BAD_HEADER.format("run,points")},
        {"field": "leaderboard.score", "line": 3, "message": BAD_SCORE.format("nan")},
        {"field": "leaderboard.run", "line": 4,
         "message": DUPLICATE_RUN.format("WASEDA-R1", 2)},
    ]
    assert response.json()["detail"] == INVALID_REFERENCE.format(count=8)
    (kept,) = ManualReference.objects.all()
    assert kept.pk == before and kept.replaced_at is None


def test_nul_bytes_are_refused_with_their_line(personas: Personas) -> None:
    rubric_case(personas)
    response = _upload(personas, **_files(qrels=b"D001 0 d1 1\nD001 0 d\x002 1\n",
                                          leaderboard=b"run,score\nA-1\x00,1\n"))
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "qrels.line", "line": 2,
         "message": CONTROL_CHARACTER.format(0, 9, NO_CONTROLS_BUT_TAB)},
        {"field": "leaderboard.line", "line": 2,
         "message": CONTROL_CHARACTER.format(0, 4, NO_CONTROLS_BUT_TAB)},
    ]
    assert not ManualReference.objects.exists()


def test_a_nul_in_the_track_field_is_a_400(personas: Personas) -> None:
    rubric_case(personas)
    response = _upload(personas, track="d\x00l", **_files(qrels=MANUAL_QRELS))
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "track"
    assert not ManualReference.objects.exists()


def test_a_file_over_the_limit_is_refused_before_it_is_read(
    personas: Personas, monkeypatch: pytest.MonkeyPatch
) -> None:
    rubric_case(personas)
    monkeypatch.setattr("scoring.reference_services.REFERENCE_MAX_BYTES", 20)
    response = _upload(personas, **_files(qrels=MANUAL_QRELS))
    assert response.status_code == 400
    message = TOO_LARGE.format(what="qrels", size=len(MANUAL_QRELS), limit=20)
    assert response.json() == {"detail": message,
                               "errors": [{"field": "qrels", "message": message}]}
    assert not ManualReference.objects.exists()


def test_it_needs_a_file(personas: Personas) -> None:
    rubric_case(personas)
    response = _upload(personas, relevant_level=1)
    assert response.status_code == 400
    assert response.json()["detail"] == NEITHER_FILE
    assert not ManualReference.objects.exists()


@pytest.mark.parametrize("relevant_level", ["0", "x", "128"])
def test_a_bad_relevant_level_is_named(personas: Personas, relevant_level: str) -> None:
    rubric_case(personas)
    response = _upload(personas, relevant_level=relevant_level,
                       **_files(qrels=MANUAL_QRELS))
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["relevant_level"]
    assert not ManualReference.objects.exists()


def test_the_track_must_be_a_ranking_or_response_track(personas: Personas) -> None:
    rubric_case(personas)
    TrackFactory.create(campaign=personas.campaign, slug="pr", kind="pr")
    unknown = _upload(personas, track="nope", **_files(qrels=MANUAL_QRELS))
    not_rubric = _upload(personas, track="pr", **_files(qrels=MANUAL_QRELS))
    assert unknown.status_code == not_rubric.status_code == 400
    assert unknown.json()["errors"] == [{"field": "track", "message": TRACK_UNKNOWN.format(
        slug="toy", track="nope", tracks="dl")}]
    assert not_rubric.json()["errors"] == [{"field": "track", "message":
                                            TRACK_NOT_RUBRIC.format(track="pr", slug="toy",
                                                                    kind="pr", tracks="dl")}]
    assert _meta(personas, url=META.replace("=dl", "=pr")).status_code == 400
    assert _meta(personas, url=META.split("?")[0]).json()["errors"][0]["field"] == "track"
    assert not ManualReference.objects.exists()


# --- personas ------------------------------------------------------------------------


@pytest.mark.parametrize(("who", "status"), [
    ("participant_a", 403), ("participant_b", 403), ("outsider", 403), ("anonymous", 401)])
def test_no_one_else_may_upload_or_read_it(personas: Personas, who: str, status: int) -> None:
    _scored_case(personas)
    assert _upload(personas, **_files(leaderboard=OFFICIAL)).status_code == 201

    upload = _upload(personas, who, **_files(qrels=MANUAL_QRELS))
    read = _meta(personas, who)

    # As the other organiser endpoints answer (docs/access.md): the campaign is
    # public, so a change is refused with 403; what only organisers see answers 404, as
    # if the campaign did not exist; 401 without a token.
    assert upload.status_code == status
    assert read.status_code == (404 if status == 403 else status)
    if status == 403:
        assert read.json()["detail"] == CAMPAIGN_NOT_FOUND
        assert "correlation" not in read.json()
    (kept,) = ManualReference.objects.all()
    assert kept.qrels is None

