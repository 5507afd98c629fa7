"""Who sees what through the API: persona x endpoint x phase (docs/access.md).

One row per endpoint that names something by id or slug: who may see it in each phase.
Everyone else must get exactly what they would get for a thing that does not exist
(the same status and the same body: no 403 that gives away an id, no body that differs);
for a write to a campaign that is public but not theirs to change, 403. Each probe runs
in a savepoint that is rolled back, so a PATCH or DELETE leaves the next probe the same
world.

Two kinds of denial may say more than "not found": the questions and the shared PR runs
of a campaign are released at dates of its public timeline (the campaign list shows
them), so a 404 before then may say when (`says_when`).

Not here: rubric-qrels and meta-evaluation need a scored RUBRIC track and have their own
persona tests (tests/scoring/test_rubric_qrels_api.py, test_meta_evaluation.py); the
uploads are writes covered in tests/submissions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction

from grading.openai_judge import OpenAIJudge
from submissions.models import Run
from tests.security.world import (
    BEFORE_TOPICS,
    MISSING_ID,
    MISSING_SLUG,
    PERSONAS,
    PHASES,
    PR_SHARED,
    PUBLISHED,
    World,
    build_world,
    set_phase,
)
from tests.support import Personas

pytestmark = pytest.mark.django_db

SIGNED_IN = tuple(who for who in PERSONAS if who != "anonymous")

# What a persona got, in the table's words.
SEES = "sees it"
AS_MISSING = "as if missing"
REFUSED = "403: may see, not change"


def seen_by(always: Iterable[str] = (), *, from_pr_due: Iterable[str] = (),
            from_publication: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """Who sees a thing in each phase: `always`, and more once PR runs are shared (the
    questions are released before then) and once results are published."""
    before = frozenset(always)
    shared = before | frozenset(from_pr_due)
    return {BEFORE_TOPICS: before, PR_SHARED: shared,
            PUBLISHED: shared | frozenset(from_publication)}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # {own_ac}, {own_pr}, {other_pr}, {judgment}, {bank_item}, {slug}
    seen: Mapping[str, frozenset[str]]
    body: dict[str, Any] = field(default_factory=dict)
    ok: int = 200
    writes_to_public_campaign: bool = False  # others: 403, the campaign is theirs to see
    says_when: bool = False

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    def url(self, ids: Mapping[str, int | str]) -> str:
        return "/api/v1/" + self.path.format(**ids)


ORGANISER = seen_by(["organiser"])

ENDPOINTS = [
    # Runs: the own team's always; PR runs shared with every team after pr_due.
    Endpoint("GET", "runs/{own_ac}/", seen_by(["organiser", "own"])),
    Endpoint("GET", "runs/{own_ac}/file/", seen_by(["organiser", "own"])),
    Endpoint("GET", "runs/{own_pr}/", seen_by(["organiser", "own"], from_pr_due=["other"])),
    Endpoint("GET", "runs/{other_pr}/", seen_by(["organiser", "other"], from_pr_due=["own"])),
    Endpoint("GET", "runs/{other_pr}/file/",
             seen_by(["organiser", "other"], from_pr_due=["own"])),
    # Marked runs: organisers; the own team once published; none of a PR run.
    Endpoint("GET", "runs/{own_ac}/marked/", seen_by(["organiser"], from_publication=["own"])),
    Endpoint("GET", "runs/{own_pr}/marked/", seen_by()),
    # Scores: of a run one may see, in a snapshot one may see (published, for teams).
    Endpoint("GET", "runs/{own_ac}/scores/", seen_by(["organiser"], from_publication=["own"])),
    Endpoint("GET", "runs/{other_pr}/scores/",
             seen_by(["organiser"], from_publication=["own", "other"])),
    # Judgments and the test bank: organisers only, reading or writing.
    Endpoint("GET", "judgments/{judgment}/", ORGANISER),
    Endpoint("PATCH", "judgments/{judgment}/", ORGANISER,
             body={"entailed": False, "note": "the passage does not say so"}),
    Endpoint("POST", "judgments/{judgment}/confirm/", ORGANISER),
    Endpoint("GET", "testbank/{bank_item}/", ORGANISER),
    Endpoint("PATCH", "testbank/{bank_item}/", ORGANISER,
             body={"text": "Who directed the film Alien?", "note": "clearer"}),
    Endpoint("DELETE", "testbank/{bank_item}/?note=duplicate", ORGANISER),
    # A campaign and what hangs off it. The campaign and its timeline are public.
    Endpoint("GET", "campaigns/{slug}/", seen_by(PERSONAS)),
    Endpoint("GET", "campaigns/{slug}/questions/",
             seen_by(["organiser"], from_pr_due=["own", "other"],
                     from_publication=["elsewhere", "outsider", "anonymous"]),
             says_when=True),
    Endpoint("GET", "campaigns/{slug}/runs/", seen_by(SIGNED_IN)),  # each their own
    Endpoint("GET", "campaigns/{slug}/shared-pr-runs.zip",
             seen_by(from_pr_due=["organiser", "own", "other"]), says_when=True),
    Endpoint("GET", "campaigns/{slug}/leaderboards/", seen_by(PERSONAS)),  # those published
    Endpoint("GET", "campaigns/{slug}/grading/", ORGANISER),
    Endpoint("GET", "campaigns/{slug}/judgments/", ORGANISER),
    Endpoint("GET", "campaigns/{slug}/qrels/", ORGANISER),
    Endpoint("GET", "campaigns/{slug}/exports/res.zip", ORGANISER),
    Endpoint("GET", "campaigns/{slug}/testbank/", ORGANISER),
    Endpoint("GET", "campaigns/{slug}/verification/grid/?track=dl&qid=D001", ORGANISER),
    Endpoint("DELETE", "campaigns/{slug}/leaderboards/ac/publish/", ORGANISER, ok=204,
             writes_to_public_campaign=True),
]


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    return build_world(personas, toy_ac_run, judge)


def _probe(world: World, who: str, endpoint: Endpoint, url: str) -> Any:
    with transaction.atomic():
        response = getattr(world.client(who), endpoint.method.lower())(
            url, endpoint.body or None, format="json")
        transaction.set_rollback(True)
    return response


def _body(response: Any) -> Any:
    return response.json() if response["Content-Type"] == "application/json" else None


def _outcome(world: World, who: str, endpoint: Endpoint) -> str:
    """What `who` got, as the table says it; anything else spelled out."""
    ids: dict[str, int | str] = {**world.ids, "slug": "toy"}
    missing: dict[str, int | str] = {**dict.fromkeys(ids, MISSING_ID), "slug": MISSING_SLUG}
    response = _probe(world, who, endpoint, endpoint.url(ids))
    if response.status_code == endpoint.ok:
        return SEES
    if (endpoint.writes_to_public_campaign and who != "anonymous"
            and response.status_code == 403):
        return REFUSED
    absent = _probe(world, who, endpoint, endpoint.url(missing))
    # Nothing there: 404; or, to the anonymous, 401 where a token is needed first.
    assert absent.status_code in ((401, 404) if who == "anonymous" else (404,)), (
        who, str(endpoint), absent.status_code)
    if response.status_code == absent.status_code and (
            _body(response) == _body(absent)
            or (endpoint.says_when and set(_body(response)) == {"detail", "errors"})):
        return AS_MISSING
    return f"{response.status_code} {response.content[:120]!r}"


def _expected(endpoint: Endpoint, phase: str, who: str) -> str:
    if who in endpoint.seen[phase]:
        return SEES
    if endpoint.writes_to_public_campaign and who != "anonymous":
        return REFUSED
    return AS_MISSING


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_each_persona_sees_what_it_may_and_nothing_else_exists_for_it(
    world: World, endpoint: Endpoint
) -> None:
    expected: dict[tuple[str, str], str] = {}
    seen: dict[tuple[str, str], str] = {}
    for phase in PHASES:
        set_phase(world, phase)
        for who in PERSONAS:
            expected[phase, who] = _expected(endpoint, phase, who)
            seen[phase, who] = _outcome(world, who, endpoint)
    assert seen == expected
