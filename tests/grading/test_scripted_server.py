"""The scripted judge server itself: its bounds, its errors, and how responders read a prompt."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest

from grading.llm.subtasks import explain_request, gold_v2
from tests.grading.scripted_server import (
    ChatRequest,
    Reply,
    ScriptedJudge,
    ScriptedServer,
)
from tests.grading.scripted_server import server as scripted_http

#: The client timeout where a request is never answered (as in the client's tests).
GIVES_UP_AFTER = 1.0


def post(base_url: str, body: bytes, timeout: float = 30.0) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(f"{base_url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def entailment_body(claim: str) -> bytes:
    return json.dumps({"model": "m", "messages": [
        {"role": "user", "content": f"PASSAGE:\nP\n\nCLAIM:\n{claim}"}],
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "r2c2_entailed", "schema": {"type": "boolean"}}}}).encode()


def test_slots_bound_the_requests_served_at_once_and_the_rest_wait() -> None:
    with ScriptedServer(lambda request: Reply("true", after="go"), slots=2) as fake:
        answers: list[int] = []
        clients = [threading.Thread(target=lambda: answers.append(
            post(fake.base_url, entailment_body("N"))[0])) for _ in range(5)]
        for client in clients:
            client.start()
        traffic = fake.traffic
        with traffic.lock:  # two hold the slots (waiting for the gate), three wait
            assert traffic.lock.wait_for(
                lambda: traffic.in_flight == 2 and traffic.waiting == 3, timeout=30)
        fake.release("go")
        for client in clients:
            client.join()

    assert answers == [200] * 5
    assert traffic.max_in_flight == 2
    assert traffic.max_waiting >= 3


@pytest.mark.parametrize("body", [b"not json {", b"[1, 2]"], ids=["not JSON", "not an object"])
def test_a_body_that_is_not_a_json_object_is_refused_with_a_400(body: bytes) -> None:
    with ScriptedServer([Reply("true")]) as fake:
        status, payload = post(fake.base_url, body)

    assert status == 400
    assert payload["error"]["message"] == "the request body is not a JSON object"
    assert fake.requests == []  # the responder never saw it


def test_a_body_over_the_limit_is_refused_with_a_413(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scripted_http, "MAX_BODY", 100)
    with ScriptedServer([Reply("true")]) as fake:
        status, payload = post(fake.base_url, entailment_body("x" * 200))

    assert status == 413
    assert payload["error"]["message"] == "the request body is over 100 bytes"


def test_a_responder_that_fails_is_answered_with_a_500_naming_its_error() -> None:
    def broken(request: ChatRequest) -> Reply:
        return Reply(request.section("NUGGET"))  # an entailment prompt has no NUGGET

    with ScriptedServer(broken) as fake:
        status, payload = post(fake.base_url, entailment_body("N"))

    assert status == 500
    assert "the user message has no NUGGET: section" in payload["error"]["message"]


def test_a_section_is_the_paragraph_under_its_own_label_and_no_longer_one() -> None:
    asked = gold_v2(question="Who?", answer="Anthony Mackie", gold_answers=["Mackie"])
    explained = explain_request(asked, True)  # adds a paragraph after the ANSWER
    request = ChatRequest(body={"messages": explained.messages})

    assert request.section("ANSWER") == "Anthony Mackie"
    assert request.section("GOLD ANSWER") == "- Mackie"
    assert request.section("QUESTION") == "Who?"
    with pytest.raises(KeyError):
        request.section("NUGGET")


def test_a_judge_served_again_by_a_new_server_holds_a_timeout_again() -> None:
    judge = ScriptedJudge(faults={"N": ["timeout"]})
    with ScriptedServer(judge):
        pass  # its teardown ends every wait on the judge
    with ScriptedServer(judge) as fake, pytest.raises(TimeoutError):
        # Unanswered until the client gives up, not closed at once as by a teardown.
        post(fake.base_url, entailment_body("N"), timeout=GIVES_UP_AFTER)

    assert judge.calls["N"] == 1
