"""The OpenAPI document, fuzzed: schemathesis sends what the document allows,
and what it does not, to the WSGI app in this process, as an organiser and as nobody.
It fails on any 5xx, on any response whose body its documented schema does not describe,
and on any status the document does not list for the operation.

Bounded and repeatable: a fixed seed, EXAMPLES valid and invalid requests per operation
and persona, no shrinking. The world is the toy campaign of the visibility tests
(tests/security/world.py) after the PR deadline; its slug, ids and tracks are offered
most of the time, so that requests get past the 404s to the code behind them.

Schemathesis's own pytest integration (`schema.parametrize()`) does not run under
pytest 9; its Python API does (`as_strategy`, `call`, `validate_response`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application
from grading.openai_judge import OpenAIJudge
from submissions.models import Run
from tests.security.world import PR_SHARED, World, build_world, set_phase
from tests.support import Personas

pytestmark = pytest.mark.django_db

#: Requests per operation and persona (about 40 operations): a minute or two on 2 cores.
EXAMPLES = 20
SEED = 20261124
SCHEMA_PATH = "/api/schema/?format=json"
#: How often a path or query parameter gets a value of the world rather than a random one.
KNOWN_VALUES = 0.8


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    world = build_world(personas, toy_ac_run, judge)
    set_phase(world, PR_SHARED)
    return world


@pytest.fixture
def in_test_transaction() -> Iterator[None]:
    """A request through the WSGI handler ends by closing the database connection
    (Django's request_finished handler), which would end the test's transaction. Django's
    test client takes that handler off for its requests; so does this, for the fuzz's."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(world: World, in_test_transaction: None) -> Any:
    """The document as the app serves it, with the world's values to offer."""
    ids = world.ids
    known = {"probability": KNOWN_VALUES}
    config = schemathesis.Config.from_dict({
        "seed": SEED,
        "dictionaries": {
            "slugs": {"values": ["toy"]},
            "runs": {"values": [ids["own_ac"], ids["own_pr"], ids["other_pr"]]},
            "judgments": {"values": [ids["judgment"]]},
            "items": {"values": [ids["bank_item"]]},
            "tracks": {"values": ["ac", "pr", "dl"]},
            "qids": {"values": ["D001", "D002", "D003"]},
        },
        "parameters": {
            "path.slug": {"dictionary": "slugs", **known},
            "path.run_id": {"dictionary": "runs", **known},
            "path.judgment_id": {"dictionary": "judgments", **known},
            "path.item_id": {"dictionary": "items", **known},
            "path.track": {"dictionary": "tracks", **known},
            "query.track": {"dictionary": "tracks", **known},
            "query.qid": {"dictionary": "qids", **known},
        },
        "generation": {"max-examples": EXAMPLES, "deterministic": True, "no-shrink": True},
    })
    return schemathesis.openapi.from_wsgi(SCHEMA_PATH, application, config=config)


def _headers(world: World, who: str) -> dict[str, str]:
    if who == "anonymous":
        return {}
    token, _ = Token.objects.get_or_create(user=world.user(who))
    return {"Authorization": f"Token {token.key}"}


FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck))


def _fuzz(operation: Any, headers: dict[str, str]) -> Callable[[], None]:
    """A Hypothesis test of one operation, with valid and invalid input."""
    checks = [not_a_server_error, response_schema_conformance, status_code_conformance]
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                      operation.as_strategy(GenerationMode.NEGATIVE))

    @FUZZ
    @given(case=cases)
    def fuzz(case: Any) -> None:
        case.validate_response(case.call(headers=headers), checks=checks)

    return fuzz


def _failures(api_schema: Any, headers: dict[str, str]) -> list[str]:
    """The failures of each operation (the first Hypothesis finds of each)."""
    failures = []
    for result in api_schema.get_all_operations():
        operation = result.ok()
        try:
            _fuzz(operation, headers)()
        except (Exception, BaseExceptionGroup) as failure:  # schemathesis: an exception group
            failures.append(f"{operation.label}: {failure}")
    return failures


@pytest.mark.parametrize("who", ["organiser", "anonymous"])
def test_no_request_gets_a_5xx_or_an_answer_its_document_does_not_describe(
    api_schema: Any, world: World, who: str
) -> None:
    failures = _failures(api_schema, _headers(world, who))
    assert not failures, "\n\n".join(failures)
