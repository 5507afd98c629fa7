"""`GET /api/v1/runs/{id}/marked/` as docs/access.md says: for the
organisers; for the run's own team once its track's leaderboard is published; 404 for a
PR run and for a run with no judgments yet.

Reproduced before the fix: the own team got 403 for its marked AC run after publication,
and a PR run's marked run was a 200 with an empty body.
"""

from __future__ import annotations

import pytest

from grading.api import MARKED_RUN_NOT_FOUND
from grading.openai_judge import OpenAIJudge
from scoring.models import Evaluation
from scoring.services import campaign_score, evaluation_publish
from submissions.models import Run
from tests.security.world import (
    MISSING_ID,
    PR_SHARED,
    PUBLISHED,
    World,
    build_world,
    set_phase,
)
from tests.support import Personas, example

pytestmark = pytest.mark.django_db

NOT_FOUND = {"detail": MARKED_RUN_NOT_FOUND,
             "errors": [{"field": "", "message": MARKED_RUN_NOT_FOUND}]}


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    return build_world(personas, toy_ac_run, judge)


def marked(world: World, who: str, run_id: int) -> tuple[int, bytes]:
    response = world.client(who).get(f"/api/v1/runs/{run_id}/marked/")
    return response.status_code, response.content


def test_the_own_team_downloads_its_marked_ac_run_once_published(world: World) -> None:
    set_phase(world, PUBLISHED)

    response = world.client("own").get(f"/api/v1/runs/{world.ids['own_ac']}/marked/")

    assert response.status_code == 200
    assert response.content == example("WASEDA-AC-1.marked")
    assert response["Content-Disposition"] == 'attachment; filename="WASEDA-AC-1.marked"'


def test_publishing_the_ac_track_alone_is_enough(world: World) -> None:
    set_phase(world, PR_SHARED)  # results not released, nothing published
    assert marked(world, "own", world.ids["own_ac"])[0] == 404

    ac = Evaluation.objects.get(track__slug="ac")
    evaluation_publish(evaluation=ac, user=world.personas.organiser, force=True)

    assert marked(world, "own", world.ids["own_ac"])[0] == 200


def test_before_publication_the_own_team_gets_the_404_of_a_missing_run(world: World) -> None:
    set_phase(world, PR_SHARED)

    hidden = world.client("own").get(f"/api/v1/runs/{world.ids['own_ac']}/marked/")
    missing = world.client("own").get(f"/api/v1/runs/{MISSING_ID}/marked/")

    assert (hidden.status_code, hidden.json()) == (missing.status_code, missing.json()) \
        == (404, NOT_FOUND)


@pytest.mark.parametrize("who", ["other", "elsewhere", "outsider"])
def test_another_team_never_gets_it_even_once_published(world: World, who: str) -> None:
    set_phase(world, PUBLISHED)

    response = world.client(who).get(f"/api/v1/runs/{world.ids['own_ac']}/marked/")

    assert (response.status_code, response.json()) == (404, NOT_FOUND)


@pytest.mark.parametrize("phase", [PR_SHARED, PUBLISHED])
def test_organisers_get_it_before_and_after_publication(world: World, phase: str) -> None:
    set_phase(world, phase)

    assert marked(world, "organiser", world.ids["own_ac"]) == (
        200, example("WASEDA-AC-1.marked"))


@pytest.mark.parametrize("who", ["organiser", "own"])
@pytest.mark.parametrize("run", ["own_pr", "other_pr"])
def test_a_pr_run_has_no_marked_run(world: World, who: str, run: str) -> None:
    set_phase(world, PUBLISHED)

    response = world.client(who).get(f"/api/v1/runs/{world.ids[run]}/marked/")

    assert (response.status_code, response.json()) == (404, NOT_FOUND)


def test_an_ac_run_with_no_judgments_yet_has_no_marked_run(
    personas: Personas, toy_ac_run: Run
) -> None:
    # Uploaded and valid, never graded; even a published leaderboard does not make one.
    campaign_score(campaign=personas.campaign)
    for evaluation in Evaluation.objects.all():
        evaluation_publish(evaluation=evaluation, user=personas.organiser, force=True)

    for who in ("organiser", "participant_a"):
        response = personas.client(who).get(f"/api/v1/runs/{toy_ac_run.pk}/marked/")
        assert (response.status_code, response.json()) == (404, NOT_FOUND), who
