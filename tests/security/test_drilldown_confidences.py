"""The results drill-down shows no other team's confidences.

docs/access.md: published leaderboards and their per-question scores are public;
the confidences of an AC run stay its team's and the organisers' even after publication.
Reproduced before the fix: once WASEDA-AC-1 was published, team B and (after results
release) the public saw its confidence on every question, and its reliability diagram,
whose one-answer bins give the same numbers away.
"""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from grading.openai_judge import OpenAIJudge
from submissions.models import Run
from tests.security.world import PUBLISHED, World, build_world, set_phase
from tests.support import Personas

pytestmark = pytest.mark.django_db

DRILL_DOWN = "/campaigns/toy/results/WASEDA-AC-1/"
CONFIDENCE_COLUMN = 'data-label="Confidence (0 to 100)"'
RELIABILITY = ">Reliability diagram of WASEDA-AC-1</title>"
WITHHELD = "The run's confidences stay with its team and the organisers"
#: The toy run's confidences (tests/data/README.md), as the table's cells sort them.
CONFIDENCES = ("0.75", "0.85", "0.95")


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    cache.clear()  # figures are cached per evaluation, and ids repeat between tests
    world = build_world(personas, toy_ac_run, judge)
    set_phase(world, PUBLISHED)
    return world


def drill_down(world: World, who: str) -> str:
    client = Client()
    if who != "anonymous":
        client.force_login(world.user(who))
    response = client.get(DRILL_DOWN)
    assert response.status_code == 200, (who, response.status_code)
    return response.content.decode()


def per_question(html: str) -> dict[str, str]:
    """Each question's row of the per-question table: qid -> its cells' HTML."""
    return dict(re.findall(r'<th scope="row" data-sort-value="(D00\d)">.*?</th>(.*?)</tr>',
                           html, flags=re.S))


@pytest.mark.parametrize("who", ["other", "elsewhere", "outsider", "anonymous"])
def test_other_teams_and_the_public_see_the_scores_but_not_the_confidences(
    world: World, who: str
) -> None:
    html = drill_down(world, who)
    rows = per_question(html)

    # The published per-question scores: correctness and nugget precision.
    assert sorted(rows) == ["D001", "D002", "D003"]
    assert "✗ incorrect" in rows["D002"] and ">0.6667</td>" in rows["D001"]
    # Not the confidences, in no form: no column, no cell, no reliability diagram.
    assert CONFIDENCE_COLUMN not in html
    for confidence in CONFIDENCES:
        assert f'data-sort-value="{confidence}"' not in html
    assert RELIABILITY not in html
    assert WITHHELD in html


@pytest.mark.parametrize("who", ["own", "organiser"])
def test_the_own_team_and_the_organisers_still_see_them(world: World, who: str) -> None:
    html = drill_down(world, who)
    rows = per_question(html)

    assert CONFIDENCE_COLUMN in html
    assert 'data-sort-value="0.85" class="num">85</td>' in rows["D002"]
    assert 'data-sort-value="0.75" class="num">75</td>' in rows["D001"]
    assert RELIABILITY in html
    assert WITHHELD not in html


def test_a_pr_run_shows_the_same_to_everyone(world: World) -> None:
    # PR runs carry no confidences: nothing is withheld, nothing is said about it.
    client = Client()
    html = client.get("/campaigns/toy/results/KYOTO-PG-1/").content.decode()

    assert ">nDCG@10</th>" in html and WITHHELD not in html


def results_page(world: World, who: str) -> str:
    client = Client()
    if who != "anonymous":
        client.force_login(world.user(who))
    response = client.get("/campaigns/toy/results/")
    assert response.status_code == 200, (who, response.status_code)
    return response.content.decode()


@pytest.mark.parametrize("who", ["other", "elsewhere", "outsider", "anonymous"])
def test_the_results_page_shows_no_other_teams_reliability_diagram(
    world: World, who: str
) -> None:
    # Found after the drill-down was fixed: the leaderboard's own plots had a reliability
    # diagram per AC run for everyone, with the same one-answer bins.
    html = results_page(world, who)

    assert ">R_O against R_U for every AC run</title>" in html  # aggregates stay public
    assert RELIABILITY not in html


@pytest.mark.parametrize("who", ["own", "organiser"])
def test_the_results_page_shows_the_own_teams_reliability_diagram(
    world: World, who: str
) -> None:
    assert RELIABILITY in results_page(world, who)
