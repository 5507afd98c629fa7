"""An id one may not see answers exactly as an id that does not exist.

Reproduced before the fix: a participant of another campaign got 403 for
`GET /api/v1/runs/{id}/marked/` and `PATCH /api/v1/judgments/{id}/` of ids that exist,
and 404 for ids that do not, so a stranger could list which ids exist
(docs/access.md: 404, never 403, for what one may not see). The matrix in
test_visibility_matrix.py holds every endpoint to this in every phase; these tests pin
the reported cases and the statuses, bodies and words one by one.
"""

from __future__ import annotations

from typing import Any

import pytest

from grading.api import JUDGMENT_NOT_FOUND, MARKED_RUN_NOT_FOUND
from grading.models import Judgment
from grading.openai_judge import OpenAIJudge
from submissions.api import RUN_NOT_FOUND
from submissions.models import Run
from tests.security.world import MISSING_ID, PUBLISHED, World, build_world, set_phase
from tests.support import Personas

pytestmark = pytest.mark.django_db

#: Who may see neither the toy campaign's judgments nor its team A's AC run.
STRANGERS = ["elsewhere", "outsider", "other"]


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    return build_world(personas, toy_ac_run, judge)


def _ask(world: World, who: str, method: str, url: str, body: dict[str, Any] | None = None
         ) -> tuple[int, Any]:
    response = getattr(world.client(who), method)(url, body, format="json")
    return response.status_code, response.json()


def _both(world: World, who: str, method: str, template: str, existing: int,
          body: dict[str, Any] | None = None) -> tuple[tuple[int, Any], tuple[int, Any]]:
    """The answers for an id that exists and for one that does not."""
    return (_ask(world, who, method, template.format(existing), body),
            _ask(world, who, method, template.format(MISSING_ID), body))


def _not_found(detail: str) -> tuple[int, dict[str, Any]]:
    return 404, {"detail": detail, "errors": [{"field": "", "message": detail}]}


@pytest.mark.parametrize("who", STRANGERS)
def test_a_stranger_cannot_tell_a_hidden_marked_run_from_a_missing_one(
    world: World, who: str
) -> None:
    hidden, missing = _both(world, who, "get", "/api/v1/runs/{}/marked/", world.ids["own_ac"])

    assert hidden == missing == _not_found(MARKED_RUN_NOT_FOUND)


@pytest.mark.parametrize("who", [*STRANGERS, "own"])
def test_no_one_but_organisers_can_tell_a_judgment_from_a_missing_one_by_editing_it(
    world: World, who: str
) -> None:
    judgment = Judgment.objects.get(pk=world.ids["judgment"])
    body = {"entailed": False, "note": "probing"}

    hidden, missing = _both(world, who, "patch", "/api/v1/judgments/{}/", judgment.pk, body)

    assert hidden == missing == _not_found(JUDGMENT_NOT_FOUND)
    judgment.refresh_from_db()
    assert judgment.edited_label is None and not judgment.edits.exists()


@pytest.mark.parametrize("who", [*STRANGERS, "own"])
@pytest.mark.parametrize(("method", "template"), [
    ("get", "/api/v1/judgments/{}/"),
    ("post", "/api/v1/judgments/{}/confirm/"),
])
def test_reading_or_confirming_a_judgment_answers_alike_for_hidden_and_missing_ids(
    world: World, who: str, method: str, template: str
) -> None:
    hidden, missing = _both(world, who, method, template, world.ids["judgment"])

    assert hidden == missing == _not_found(JUDGMENT_NOT_FOUND)


@pytest.mark.parametrize("who", ["elsewhere", "outsider"])
@pytest.mark.parametrize("template", ["/api/v1/runs/{}/", "/api/v1/runs/{}/file/"])
def test_a_stranger_cannot_tell_a_hidden_run_from_a_missing_one(
    world: World, who: str, template: str
) -> None:
    hidden, missing = _both(world, who, "get", template, world.ids["own_ac"])

    assert hidden == missing == _not_found(RUN_NOT_FOUND)


@pytest.mark.parametrize("who", ["other", "elsewhere", "outsider"])
def test_scores_of_a_run_one_may_not_see_answer_as_a_missing_run_even_once_published(
    world: World, who: str
) -> None:
    set_phase(world, PUBLISHED)  # the AC leaderboard is public now; the run is not

    hidden, missing = _both(world, who, "get", "/api/v1/runs/{}/scores/", world.ids["own_ac"])

    assert hidden == missing
    assert hidden[0] == 404


def test_the_organisers_see_and_edit_what_the_others_cannot_tell_exists(world: World) -> None:
    judgment = world.ids["judgment"]

    marked = world.client("organiser").get(f"/api/v1/runs/{world.ids['own_ac']}/marked/")
    assert marked.status_code == 200
    status, body = _ask(world, "organiser", "patch", f"/api/v1/judgments/{judgment}/",
                        {"entailed": False, "note": "the passage does not say so"})
    assert (status, body["label"]) == (200, {"entailed": False})


def test_a_participant_may_see_the_campaign_but_not_change_its_grading_403(
    world: World
) -> None:
    # 403 is for what one can see and may not change (docs/access.md): the campaign
    # is public, its grading is the organisers' to start.
    status, body = _ask(world, "other", "post", "/api/v1/campaigns/toy/grading/")

    assert (status, body["detail"]) == (403, "only the organisers of toy may do this")
    assert _ask(world, "other", "get", "/api/v1/campaigns/toy/grading/") == _ask(
        world, "other", "get", "/api/v1/campaigns/no-such-campaign/grading/")
