"""Rubric-Cover's key carries its track's cover_k wherever it is named (docs/measures.md), on
ranking and response tracks alike (a response's value counts all its segments); archives and
snapshots from when every Rubric-Cover was `rubric_cover@10` still read."""

from __future__ import annotations

import csv
import importlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from campaign.models import Track
from scoring.archive_format import LEADERBOARDS_CSV
from scoring.models import Evaluation
from scoring.replay import replay_archive
from tests.grading.rubric_support import SLUG, ScriptedRubric, grade, movie_rubric, submit
from tests.grading.scripted_server import ScriptedServer
from tests.scoring.archive_support import export, members, publish_all, rewrite
from tests.scoring.test_rubric_contract import (
    ALIEN,
    BLADE,
    CGI,
    DIRECTOR,
    KYOTO_BM25,
    KYOTO_Q1,
    KYOTO_Q2_1,
    OFFICIAL,
    RELEASE,
    TOY,
)
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

API = f"/api/v1/campaigns/{SLUG}"
OLD = "rubric_cover@10"
# Grades as tests/scoring/test_rubric_contract.py scripts them. No run ranks more than 3
# passages per query, so the top 5 holds them all and Rubric-Cover@5 is what @10 was there:
# WASEDA-bm25 1, KYOTO-bm25 1/4 on dl; KYOTO-llm 3/4 on gen (all its segments, whatever k).
DL_COVER = {"WASEDA-bm25": 1.0, "KYOTO-bm25": 0.25}
GEN_COVER = 3 / 4
GRADES = {(ALIEN, DIRECTOR): (5, "Ridley Scott"), (ALIEN, RELEASE): (5, "1979"),
          (BLADE, DIRECTOR): (4, "Ridley Scott"), (BLADE, RELEASE): (0, "unanswerable"),
          (TOY, DIRECTOR): (0, "no answer"), (TOY, RELEASE): (1, "1995"),
          (TOY, CGI): (4, "the first feature made entirely with computer animation"),
          (KYOTO_Q1, DIRECTOR): (5, "Ridley Scott"), (KYOTO_Q1, RELEASE): (3, "1979"),
          (KYOTO_Q2_1, CGI): (5, "the first fully computer-animated feature film")}


def _published(gen_cover_k: int | None = None) -> Personas:
    """tests/data/rubric, dl at cover_k 5 (gen at `gen_cover_k`, else its default 10), its
    three runs graded, scored and published."""
    personas = movie_rubric()
    Track.objects.filter(campaign=personas.campaign, slug="dl").update(cover_k=5)
    if gen_cover_k is not None:
        Track.objects.filter(campaign=personas.campaign, slug="gen").update(cover_k=gen_cover_k)
    submit(personas, "participant_a", "WASEDA-bm25", "dl")
    submit(personas, "participant_b", "KYOTO-bm25", "dl", content=KYOTO_BM25)
    submit(personas, "participant_b", "KYOTO-llm", "gen")
    with ScriptedServer(ScriptedRubric(grades=GRADES)) as server:
        grade(server)
    call_command("score", SLUG, stdout=io.StringIO())
    publish_all(personas.campaign, personas.organiser)
    return personas


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> Iterator[Personas]:
    """dl at cover_k 5, gen (response) at its default cover_k, 10."""
    monkeypatch.setattr("sys.stderr", io.StringIO())
    yield _published()


@pytest.fixture
def gen_at_5(monkeypatch: pytest.MonkeyPatch) -> Iterator[Personas]:
    """dl and gen (response) both at cover_k 5."""
    monkeypatch.setattr("sys.stderr", io.StringIO())
    yield _published(gen_cover_k=5)


def _boards(personas: Personas) -> dict[str, dict[str, Any]]:
    response = personas.client("organiser").get(f"{API}/leaderboards/")
    assert response.status_code == 200
    return {board["track"]: board for board in response.json()["leaderboards"]}


def _measures_named(board: dict[str, Any]) -> set[str]:
    """Every measure name a board's rows and statistics use."""
    statistics = board["statistics"]
    return {*(key for row in board["rows"] for key in row), statistics["measure"],
            statistics.get("hsd_measure", ""), *statistics["intervals"]}


def _settings(page: str, track: str) -> str:
    """What a results page says of a track's cover_k beside its table."""
    section = page[page.index(f'<section id="track-{track}"'):]
    return section[section.index("<dt>Rubric-Cover k</dt>"):].split("</dd>")[0]


def test_the_api_and_the_meta_evaluation_name_rubric_cover_by_the_tracks_k(
    published: Personas,
) -> None:
    boards = _boards(published)
    dl, gen = boards["dl"], boards["gen"]
    assert dl["cover_k"] == 5
    assert [row["run"] for row in dl["rows"]] == ["WASEDA-bm25", "KYOTO-bm25"]
    assert {row["run"]: row["rubric_cover@5"] for row in dl["rows"]} == pytest.approx(DL_COVER)
    assert (dl["statistics"]["measure"], dl["statistics"]["hsd_measure"]) == (
        "rubric_cover@5", "rubric_cover@5")
    assert "rubric_cover@5" in dl["statistics"]["intervals"]
    assert OLD not in _measures_named(dl)
    # A response is named by its track's cover_k too, the default 10 here, and its value
    # counts all its segments.
    assert gen["cover_k"] == 10
    assert gen["rows"][0]["rubric_cover@10"] == pytest.approx(GEN_COVER)
    assert gen["statistics"]["measure"] == OLD and OLD in gen["statistics"]["intervals"]
    for board in (dl, gen):
        assert "rubric_cover" not in _measures_named(board)

    organiser = published.client("organiser")
    run = dl["rows"][1]["run_id"]
    scores = organiser.get(f"/api/v1/runs/{run}/scores/").json()
    assert scores["aggregates"]["rubric_cover@5"] == pytest.approx(0.25)
    assert set(scores["per_question"]) >= {"rubric_cover@5"}

    uploaded = organiser.post(f"{API}/reference/", {
        "track": "dl", "leaderboard": SimpleUploadedFile("official.csv", OFFICIAL.encode())},
        format="multipart")
    assert uploaded.status_code == 201, uploaded.json()
    meta = organiser.get(f"{API}/meta-evaluation/", {"track": "dl"}).json()
    assert "rubric_cover@5" in meta["correlation"] and OLD not in meta["correlation"]


def test_the_pages_and_the_exports_name_rubric_cover_by_the_tracks_k(
    published: Personas,
) -> None:
    page = signed_in(published, "organiser").get(f"/campaigns/{SLUG}/results/").content.decode()
    assert 'data-label="Rubric-Cover@5"' in page and 'data-label="Rubric-Cover@10"' in page
    assert 'data-label="Rubric-Cover"' not in page
    assert "ranked by Rubric-Cover@5" in page and "ranked by Rubric-Cover@10" in page
    assert "Tukey HSD on Rubric-Cover@5: which runs differ" in page
    assert _settings(page, "dl").endswith("<dd>5")
    assert _settings(page, "gen").endswith("<dd>all segments (named Rubric-Cover@10)")
    drill_down = signed_in(published, "organiser").get(
        f"/campaigns/{SLUG}/results/KYOTO-bm25/").content.decode()
    assert 'data-label="Rubric-Cover@5"' in drill_down and "Rubric-Cover@10" not in drill_down
    drill_down = signed_in(published, "organiser").get(
        f"/campaigns/{SLUG}/results/KYOTO-llm/").content.decode()
    assert 'data-label="Rubric-Cover@10"' in drill_down

    organiser = published.client("organiser")
    text = organiser.get(f"{API}/leaderboards/?format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert "rubric_cover" not in rows[0]
    assert {row["run"]: float(row["rubric_cover@5"]) for row in rows
            if row["track"] == "dl"} == pytest.approx(DL_COVER)
    assert {row["rubric_cover@10"] for row in rows if row["track"] == "dl"} == {""}
    [gen] = [row for row in rows if row["track"] == "gen"]
    assert (float(gen["rubric_cover@10"]), gen["rubric_cover@5"], gen["cover_k"]) == (
        pytest.approx(GEN_COVER), "", "10")
    tex = organiser.get(f"{API}/exports/leaderboards.tex").content.decode()
    assert "Rubric-Cover@5 & n-EXAM" in tex and "significantly worse in Rubric-Cover@5" in tex
    assert "Rubric-Cover@10 & n-EXAM" in tex
    assert "cover\\_k = 10; depth = 20; Rubric-Cover over all segments" in tex


def test_the_archive_names_rubric_cover_by_the_tracks_k_and_replays(
    published: Personas, tmp_path: Path
) -> None:
    archive = export(SLUG, tmp_path / "archive.zip")
    content = members(archive)
    dl, gen = (json.loads(content[f"leaderboards/{track}.json"]) for track in ("dl", "gen"))
    assert (dl["cover_k"], gen["cover_k"]) == (5, 10)
    assert {row["run"]: row["rubric_cover@5"] for row in dl["rows"]} == pytest.approx(DL_COVER)
    assert gen["rows"][0][OLD] == pytest.approx(GEN_COVER)
    assert OLD not in _measures_named(dl) and "rubric_cover" not in _measures_named(gen)
    report = replay_archive(str(archive))
    assert report.ok, [str(d) for d in report.differences]
    assert report.leaderboards == ["dl", "gen"] and report.notes == []


def test_a_response_track_at_cover_k_5_publishes_rubric_cover_at_5_over_all_its_segments(
    gen_at_5: Personas, tmp_path: Path
) -> None:
    gen = _boards(gen_at_5)["gen"]
    assert gen["cover_k"] == 5
    # The same number as at the default k: a response counts all its segments.
    assert gen["rows"][0]["rubric_cover@5"] == pytest.approx(GEN_COVER)
    assert gen["statistics"]["measure"] == "rubric_cover@5"
    assert {OLD, "rubric_cover"}.isdisjoint(_measures_named(gen))
    page = signed_in(gen_at_5, "organiser").get(f"/campaigns/{SLUG}/results/").content.decode()
    assert _settings(page, "gen").endswith("<dd>all segments (named Rubric-Cover@5)")

    archive = export(SLUG, tmp_path / "archive.zip")
    archived = json.loads(members(archive)["leaderboards/gen.json"])
    assert (archived["cover_k"], archived["rows"][0]["rubric_cover@5"]) == (
        5, pytest.approx(GEN_COVER))
    report = replay_archive(str(archive))
    assert report.ok, [str(d) for d in report.differences]
    assert report.notes == []


def _old_board(data: bytes, new: str, cover_k: int | None) -> bytes:
    """A leaderboard's JSON as written when every Rubric-Cover was rubric_cover@10 (and a
    response recorded no cover_k)."""
    board = json.loads(data.replace(f'"{new}"'.encode(), f'"{OLD}"'.encode()))
    return json.dumps(board | {"cover_k": cover_k}, indent=1).encode()


def _old_csv(data: bytes) -> bytes:
    """The CSV of that time: one rubric_cover@10 column for every track's Rubric-Cover, and
    no cover_k for a response."""
    rows = list(csv.reader(io.StringIO(data.decode())))
    header = rows[0]
    at_5, at_10 = header.index("rubric_cover@5"), header.index(OLD)
    track, cover_k = header.index("track"), header.index("cover_k")
    out = io.StringIO()
    writer = csv.writer(out)
    for number, row in enumerate(rows):
        if number:
            row[at_10] = row[at_10] or row[at_5]
            row[cover_k] = "" if row[track] == "gen" else row[cover_k]
        writer.writerow([value for i, value in enumerate(row) if i != at_5])
    return out.getvalue().encode()


def test_an_archive_from_before_the_k_was_named_still_replays(
    published: Personas, tmp_path: Path
) -> None:
    archive = export(SLUG, tmp_path / "archive.zip")
    rewrite(archive, "leaderboards/dl.json", lambda d: _old_board(d, "rubric_cover@5", 5),
            fix_manifest=True)
    rewrite(archive, "leaderboards/gen.json", lambda d: _old_board(d, OLD, None),
            fix_manifest=True)
    rewrite(archive, LEADERBOARDS_CSV, _old_csv, fix_manifest=True)
    assert b'"rubric_cover@5"' not in members(archive)["leaderboards/dl.json"]

    report = replay_archive(str(archive))
    assert report.ok, [str(d) for d in report.differences]
    # gen's board, named rubric_cover@10 with no cover_k recorded, needs no new name.
    assert report.notes == [
        "track dl: archived when every Rubric-Cover was called rubric_cover@10; read as "
        "rubric_cover@5, its name at the board's cover_k"]
    fresh = replay_archive(str(export(SLUG, tmp_path / "fresh.zip")))
    # The same numbers are compared, under the name of the track's k.
    assert report.numbers == fresh.numbers

    # A number changed under the old name is still found, and named as the track names it.
    rewrite(archive, "leaderboards/dl.json",
            lambda d: d.replace(b'"rubric_cover@10": 0.25', b'"rubric_cover@10": 0.5', 1),
            fix_manifest=True)
    rewrite(archive, "leaderboards/gen.json",
            lambda d: d.replace(b'"rubric_cover@10": 0.75', b'"rubric_cover@10": 0.5', 1),
            fix_manifest=True)
    differing = {(d.track, d.run, d.measure) for d in replay_archive(str(archive)).differences}
    assert differing == {("dl", "KYOTO-bm25", "rubric_cover@5"),
                         ("gen", "KYOTO-llm", "rubric_cover@10")}


def _stored_names(track: str) -> set[str]:
    """Every measure name the stored snapshots of a track use."""
    names: set[str] = set()
    for evaluation in Evaluation.objects.filter(track__slug=track):
        statistics = evaluation.statistics
        names |= {statistics["measure"], statistics.get("hsd_measure", ""),
                  *statistics["intervals"]}
        for score in evaluation.scores.all():
            names |= {*score.aggregates, *score.per_question}
    return names


def test_migration_0006_names_a_stored_snapshots_rubric_cover_by_its_k(
    published: Personas,
) -> None:
    migration = importlib.import_module("scoring.migrations.0006_rubric_cover_named_by_k")
    migration.backwards(apps, None)  # the snapshots as stored before the migration
    before = _boards(published)
    assert "rubric_cover@5" not in _measures_named(before["dl"])
    assert OLD in _measures_named(before["dl"]) and OLD in _measures_named(before["gen"])

    migration.forwards(apps, None)
    after = _boards(published)
    assert {row["run"]: row["rubric_cover@5"] for row in after["dl"]["rows"]} == \
        pytest.approx(DL_COVER)
    assert after["dl"]["statistics"]["hsd_measure"] == "rubric_cover@5"
    assert OLD not in _measures_named(after["dl"])
    # A response at the default k keeps its name, rubric_cover@10, and its numbers.
    assert after["gen"] == before["gen"]
    assert after["gen"]["rows"][0][OLD] == pytest.approx(GEN_COVER)
    # Only names changed: the numbers are the ones stored.
    assert {row["run"]: row["rubric_cover@5"] for row in after["dl"]["rows"]} == {
        row["run"]: row[OLD] for row in before["dl"]["rows"]}

    # A response snapshot that recorded no cover_k, as every one did before, keeps
    # rubric_cover@10 both ways; the page still says its value counts all segments.
    Evaluation.objects.filter(track__slug="gen").update(params={
        "min_grade": 4, "label": "max", "cover_k": None, "depth": 20})
    for step in (migration.forwards, migration.backwards, migration.forwards):
        step(apps, None)
        assert _stored_names("gen") >= {OLD} and "rubric_cover" not in _stored_names("gen")
    gen = _boards(published)["gen"]
    assert (gen["cover_k"], gen["rows"][0][OLD]) == (None, pytest.approx(GEN_COVER))
    page = signed_in(published, "organiser").get(f"/campaigns/{SLUG}/results/").content.decode()
    assert _settings(page, "gen").endswith("<dd>all segments (named Rubric-Cover@10)")


def test_migration_0006_names_a_response_snapshot_by_the_cover_k_it_recorded(
    gen_at_5: Personas,
) -> None:
    migration = importlib.import_module("scoring.migrations.0006_rubric_cover_named_by_k")
    migration.backwards(apps, None)
    assert OLD in _stored_names("gen") and "rubric_cover@5" not in _stored_names("gen")
    assert _boards(gen_at_5)["gen"]["rows"][0][OLD] == pytest.approx(GEN_COVER)
    migration.forwards(apps, None)
    assert "rubric_cover@5" in _stored_names("gen") and OLD not in _stored_names("gen")
    assert _boards(gen_at_5)["gen"]["rows"][0]["rubric_cover@5"] == pytest.approx(GEN_COVER)
