"""The results archive from the pages, by persona: organisers download
the full archive from their dashboard; each team downloads its public part (its own runs,
the shared PR runs, the published leaderboards; no gold answers, no judgments, no other
team's AC run or confidences); anyone else finds nothing (404, docs/access.md)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.test import Client

from campaign.models import GoldAnswer, Question
from grading.openai_judge import OpenAIJudge
from scoring.archive_format import GOLD_ANSWERS, JUDGMENTS, MANIFEST, RUNS
from scoring.models import Evaluation
from scoring.replay import PUBLIC_ARCHIVE, replay_archive
from submissions.models import Run
from tests.scoring.archive_support import grade_and_score, publish_all
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

PAGE = "/campaigns/toy/dashboard/archive/"
FULL = "/campaigns/toy/dashboard/archive/full.zip"
PUBLIC = "/campaigns/toy/team/archive.zip"


@pytest.fixture
def published(toy_ac_run: Run, judge: OpenAIJudge, personas: Personas) -> list[Evaluation]:
    grade_and_score(toy_ac_run, judge)
    GoldAnswer.objects.create(question=Question.objects.get(campaign=personas.campaign,
                                                            qid="D001"),
                              text="Chang'e 4 (the secret answer)")
    return publish_all(personas.campaign, personas.organiser)


def download(client: Client, url: str) -> dict[str, bytes]:
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert "attachment" in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.getvalue())) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def run_names(content: dict[str, bytes]) -> set[str]:
    return {json.loads(line)["name"] for line in content[RUNS].decode().splitlines()}


def test_the_organiser_finds_the_archive_on_the_dashboard_and_downloads_it_whole(
    published: list[Evaluation], personas: Personas
) -> None:
    organiser = signed_in(personas, "organiser")
    assert 'id="archive-link"' in organiser.get("/campaigns/toy/dashboard/").content.decode()
    page = organiser.get(PAGE).content.decode()
    assert f'href="{FULL}"' in page and "Published leaderboards: ac, pr." in page
    content = download(organiser, FULL)
    assert json.loads(content[MANIFEST])["scope"] == "full"
    assert b"the secret answer" in content[GOLD_ANSWERS]
    assert JUDGMENTS in content
    assert run_names(content) == {"WASEDA-PO-1", "KYOTO-PG-1", "WASEDA-AC-1"}


@pytest.mark.parametrize("who", ["participant_a", "participant_b", "outsider"])
def test_no_one_but_organisers_finds_the_full_archive(personas: Personas, who: str) -> None:
    client = signed_in(personas, who)
    assert client.get(PAGE).status_code == 404
    assert client.get(FULL).status_code == 404


@pytest.mark.parametrize("url", [PAGE, FULL, PUBLIC])
def test_anonymous_visitors_are_sent_to_sign_in(personas: Personas, url: str) -> None:
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_team_downloads_its_own_runs_the_shared_ones_and_the_published_boards(
    published: list[Evaluation], personas: Personas, tmp_path
) -> None:
    waseda = signed_in(personas, "participant_a")
    assert 'id="archive-public-link"' in waseda.get("/campaigns/toy/team/").content.decode()
    content = download(waseda, PUBLIC)
    manifest = json.loads(content[MANIFEST])
    assert (manifest["scope"], manifest["team"]) == ("public", "WASEDA")
    assert run_names(content) == {"WASEDA-PO-1", "KYOTO-PG-1", "WASEDA-AC-1"}
    assert GOLD_ANSWERS not in content and JUDGMENTS not in content
    assert "qrels/pr.qrels" not in content  # derived PR qrels are the organisers'
    assert "marked/WASEDA-AC-1.marked" in content  # its own, once published
    [row] = json.loads(content["leaderboards/ac.json"])["rows"]
    assert "confidence" in row["per_question"]  # its own confidences
    path = tmp_path / "public.zip"
    path.write_bytes(waseda.get(PUBLIC).getvalue())
    report = replay_archive(str(path))
    assert report.ok and report.notes == [PUBLIC_ARCHIVE]


def test_another_team_gets_neither_the_ac_run_nor_its_confidences(
    published: list[Evaluation], personas: Personas
) -> None:
    content = download(signed_in(personas, "participant_b"), PUBLIC)
    assert json.loads(content[MANIFEST])["team"] == "KYOTO"
    # The PR runs were shared at pr_due; WASEDA's AC run stays WASEDA's.
    assert run_names(content) == {"WASEDA-PO-1", "KYOTO-PG-1"}
    assert not [name for name in content if "WASEDA-AC-1" in name]
    [row] = json.loads(content["leaderboards/ac.json"])["rows"]
    assert row["run"] == "WASEDA-AC-1" and row["hmr"] == pytest.approx(0.255)
    assert "confidence" not in row["per_question"] and "correct" in row["per_question"]
    assert b"the secret answer" not in b"".join(content.values())


def test_an_outsider_finds_no_public_archive(published: list[Evaluation],
                                             personas: Personas) -> None:
    assert signed_in(personas, "outsider").get(PUBLIC).status_code == 404
    assert signed_in(personas, "organiser").get(PUBLIC).status_code == 404
