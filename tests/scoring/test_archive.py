"""The results archive: `export_campaign` writes every part a
campaign's numbers rest on, and a participant's part holds only what they may see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.archive_format import JUDGMENTS, MANIFEST, RUNS, member_sha256
from scoring.models import Evaluation
from scoring.replay import replay_archive
from tests.scoring.archive_support import export, members, publish_all
from tests.support import Personas

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(scored: list[Evaluation], personas: Personas) -> list[Evaluation]:
    return publish_all(personas.campaign, personas.organiser)


def test_the_full_archive_holds_every_part_and_a_manifest_of_them(
    published: list[Evaluation], tmp_path: Path
) -> None:
    archive = export("toy", tmp_path / "toy.zip")
    content = members(archive)
    manifest = json.loads(content[MANIFEST])
    assert manifest["scope"] == "full" and manifest["campaign"] == "toy"
    assert set(manifest["members"]) == set(content) - {MANIFEST}
    import zipfile
    with zipfile.ZipFile(archive) as opened:
        for member, listed in manifest["members"].items():
            assert member_sha256(opened, member) == listed["sha256"], member
    for member in ("campaign.yaml", "questions.txt", RUNS, JUDGMENTS, "software.json",
                   "prompts/index.json", "leaderboards/ac.json", "leaderboards/pr.json",
                   "leaderboards/ac.tex", "leaderboards/leaderboards.csv", "qrels/pr.qrels",
                   "marked/WASEDA-AC-1.marked"):
        assert member in content, member
    runs = [json.loads(line) for line in content[RUNS].decode().splitlines()]
    assert {run["name"] for run in runs} == {"WASEDA-PO-1", "KYOTO-PG-1", "WASEDA-AC-1"}
    toy = Path(__file__).parents[1] / "data" / "toy"
    for run in runs:
        assert content[run["member"]] == (toy / run["name"]).read_bytes()
    judgments = [json.loads(line) for line in content[JUDGMENTS].decode().splitlines()]
    assert judgments and all(j["uses"] and j["judge_model"] == "scripted-judge"
                             for j in judgments)
    index = json.loads(content["prompts/index.json"])["prompts"]
    assert {j["prompt_version"] for j in judgments} <= set(index)
    assert all(member in content for member in index.values() if member)


def test_the_replay_of_a_fresh_archive_matches_every_number(
    published: list[Evaluation], tmp_path: Path
) -> None:
    report = replay_archive(str(export("toy", tmp_path / "toy.zip")))
    assert report.manifest_problems == [] and report.differences == []
    assert sorted(report.leaderboards) == ["ac", "pr"]
    assert report.numbers > 50
