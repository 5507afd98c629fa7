"""The judge client against a scripted OpenAI-compatible server on loopback (real HTTP)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from grading.llm import parsing
from grading.llm.calls import JudgeCall, JudgeConfig, JudgeError
from grading.llm.client import JudgeClient
from grading.llm.inputs import JudgeRequest
from grading.llm.parsing import VerdictLabel
from grading.llm.subtasks import ENTAILMENT_V2, entailment_v2
from tests.grading.scripted_server import (
    ChatRequest,
    NoReply,
    RawBody,
    Reply,
    ScriptedServer,
    Status,
)

T = TypeVar("T")

ENTAILED = "true"
NOT_ENTAILED = "false"

# The client timeout where a timeout is under test: the fake never answers a NoReply, so
# that request always times out; every other reply has this long on loopback, which even
# one busy core gives it many times over. Elsewhere the timeout is far beyond any reply.
GIVES_UP_AFTER = 1.0


def config(fake: ScriptedServer, **overrides: Any) -> JudgeConfig:
    settings: dict[str, Any] = {
        "base_url": fake.base_url, "model": "fake-judge", "concurrency": 4, "timeout": 30.0,
        "max_retries": 3, "parse_attempts": 2, "backoff_initial": 0.01, "backoff_max": 0.05,
        # One request per judgment: the scripted replies carry no logprobs, and resampling
        # for a confidence is tested on its own (TestDoubtWithoutLogprobs).
        "doubt_samples": 0,
    }
    settings.update(overrides)
    return JudgeConfig(**settings)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


async def judge_one(cfg: JudgeConfig, passage: str = "P", nugget: str = "N"
                    ) -> JudgeCall[VerdictLabel]:
    async with JudgeClient(cfg) as judge:
        return await judge.judge(entailment_v2(passage=passage, nugget=nugget))


def test_it_records_a_judgment_with_its_provenance() -> None:
    with ScriptedServer([Reply(ENTAILED, prompt_tokens=150, completion_tokens=17)]) as fake:
        cfg = config(fake)
        started = time.monotonic()
        call = run(judge_one(cfg, passage="Paris is in France.", nugget="Paris is French."))
        elapsed = time.monotonic() - started

    assert call.label == VerdictLabel(verdict=True)
    assert call.needs_review is False
    assert call.error is None
    assert call.raw_output == ENTAILED
    assert call.kind == "entailment"
    assert call.prompt_version == ENTAILMENT_V2
    assert call.model == "fake-judge"
    assert call.served_model == "fake-judge"
    assert call.decoding == {"temperature": 0.0, "max_tokens": 1024, "seed": 0}
    assert call.prompt_tokens == 150
    assert call.completion_tokens == 17
    assert call.finish_reason == "stop"
    assert 0 < call.latency < elapsed  # the request's own time, within the whole call's
    assert call.attempts == 1
    assert call.input_hash == entailment_v2(
        passage="Paris is in France.", nugget="Paris is French."
    ).input_hash(model="fake-judge", decoding=cfg.decoding)


def test_it_sends_the_schema_and_greedy_decoding_parameters() -> None:
    with ScriptedServer([Reply(ENTAILED)]) as fake:
        run(judge_one(config(fake, seed=7, max_tokens=256)))
        (body,) = fake.requests

    assert body["model"] == "fake-judge"
    assert body["temperature"] == 0
    assert body["seed"] == 7
    assert body["max_tokens"] == 256
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "r2c2_entailed"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "boolean"}
    assert [message["role"] for message in body["messages"]] == ["system", "user"]


def test_it_retries_a_timeout_then_succeeds() -> None:
    with ScriptedServer([NoReply(), Reply(NOT_ENTAILED)]) as fake:
        call = run(judge_one(config(fake, timeout=GIVES_UP_AFTER)))
        requests = len(fake.requests)

    assert call.label == VerdictLabel(verdict=False)
    assert call.attempts == 2
    assert requests == 2


@pytest.mark.parametrize("status", [500, 502, 503, 408])
def test_it_retries_a_server_error_then_succeeds(status: int) -> None:
    with ScriptedServer([Status(status), Reply(ENTAILED)]) as fake:
        call = run(judge_one(config(fake)))
        requests = len(fake.requests)

    assert call.label is not None and call.label.verdict is True
    assert call.attempts == 2
    assert requests == 2


def test_it_retries_a_rate_limit_then_succeeds() -> None:
    with ScriptedServer([Status(429, retry_after=0.01), Status(429), Reply(ENTAILED)]) as fake:
        call = run(judge_one(config(fake)))

    assert call.label is not None
    assert call.attempts == 3


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_client_error_fails_permanently_without_a_retry(status: int) -> None:
    with ScriptedServer([Status(status, message="bad request"), Reply(ENTAILED)]) as fake:
        with pytest.raises(JudgeError) as failed:
            run(judge_one(config(fake)))
        requests = len(fake.requests)

    assert failed.value.permanent is True
    assert failed.value.status == status
    assert failed.value.attempts == 1
    assert requests == 1
    assert str(failed.value).startswith(
        f"entailment judgment refused by the server (HTTP {status})")


def test_it_gives_up_on_a_server_that_keeps_failing_and_says_it_may_recover() -> None:
    with ScriptedServer([Status(503)]) as fake:
        with pytest.raises(JudgeError) as failed:
            run(judge_one(config(fake, max_retries=2)))
        requests = len(fake.requests)

    assert failed.value.permanent is False
    assert failed.value.attempts == 3
    assert requests == 3


def test_it_gives_up_on_a_server_that_cannot_be_reached() -> None:
    with ScriptedServer([Reply(ENTAILED)]) as fake:
        cfg = config(fake, max_retries=1)
    # The fake has stopped: nothing listens on its port any more.
    with pytest.raises(JudgeError) as failed:
        run(judge_one(cfg))

    assert failed.value.permanent is False
    assert "connection error" in str(failed.value)


def test_a_200_without_a_chat_completion_is_a_server_fault_and_retried() -> None:
    with ScriptedServer([RawBody(b"<html>proxy</html>"), RawBody(b'{"choices": []}'),
                     Reply(ENTAILED)]) as fake:
        call = run(judge_one(config(fake)))

    assert call.label is not None and call.label.verdict is True
    assert call.needs_review is False
    assert call.attempts == 3


def test_a_server_that_never_sends_a_chat_completion_fails_transiently() -> None:
    fake = ScriptedServer([RawBody(b'{"choices": []}')])
    with fake, pytest.raises(JudgeError) as failed:
        run(judge_one(config(fake, max_retries=1)))

    assert failed.value.permanent is False
    assert "server answered 200 without a chat completion (no choices)" in str(failed.value)


def test_a_reply_that_never_parses_is_flagged_for_review_with_its_raw_output() -> None:
    with ScriptedServer([Reply("not json"), Reply('"maybe"')]) as fake:
        call = run(judge_one(config(fake, parse_attempts=2)))
        requests = len(fake.requests)

    assert call.needs_review is True
    assert call.label is None
    assert call.raw_output == '"maybe"'
    assert call.error == parsing.WRONG_TYPE.format(field="entailed", expected="true or false",
                                                   found='a string "maybe"')
    assert call.attempts == 2
    assert requests == 2


def test_a_reply_that_parses_on_the_second_try_is_accepted() -> None:
    with ScriptedServer([Reply('tru'), Reply(ENTAILED)]) as fake:
        call = run(judge_one(config(fake, parse_attempts=3)))

    assert call.needs_review is False
    assert call.label is not None and call.label.verdict is True
    assert call.attempts == 2


def test_transient_failures_and_bad_replies_are_counted_together_in_attempts() -> None:
    with ScriptedServer([Status(500), Reply("oops"), Status(429), Reply("oops")]) as fake:
        call = run(judge_one(config(fake, parse_attempts=2)))

    assert call.needs_review is True
    assert call.attempts == 4


def test_requests_in_flight_never_exceed_the_concurrency() -> None:
    with ScriptedServer([Reply(ENTAILED)], hold_until=3) as fake:
        cfg = config(fake, concurrency=3)

        async def judge_many() -> list[JudgeCall[VerdictLabel] | JudgeError]:
            async with JudgeClient(cfg) as judge:
                return await judge.judge_all(
                    entailment_v2(passage="P", nugget=f"N{i}") for i in range(12))

        outcomes = run(judge_many())
        most = fake.max_in_flight

    assert most == 3
    assert all(isinstance(call, JudgeCall) and call.label for call in outcomes)


def test_a_batch_keeps_request_order_and_isolates_a_failure() -> None:
    def respond(request: ChatRequest) -> Reply | Status:
        claim = request.section("CLAIM")
        if claim == "bad":
            return Status(400)
        return Reply(ENTAILED if claim.startswith("yes") else NOT_ENTAILED)

    requests = [entailment_v2(passage="P", nugget=n) for n in ("yes-1", "bad", "no-1")]
    with ScriptedServer(respond) as fake:
        async def judge_batch() -> list[JudgeCall[VerdictLabel] | JudgeError]:
            async with JudgeClient(config(fake)) as judge:
                return await judge.judge_all(requests)

        first, second, third = run(judge_batch())

    assert isinstance(first, JudgeCall) and first.label and first.label.verdict is True
    assert isinstance(second, JudgeError) and second.permanent is True
    assert isinstance(third, JudgeCall) and third.label and third.label.verdict is False


def test_judge_each_yields_every_request_with_its_outcome_as_it_ends() -> None:
    def respond(request: ChatRequest) -> Reply:
        claim = request.section("CLAIM")
        # The first request is answered only once the other three have come out, so it
        # must come out last; one yielded in request order would wait for it, time out
        # (no retry) and come out first, as an error.
        return Reply(ENTAILED, after="the rest came out" if claim == "N0" else None)

    requests = [entailment_v2(passage="P", nugget=f"N{i}") for i in range(4)]
    with ScriptedServer(respond) as fake:
        async def collect() -> list[tuple[JudgeRequest[VerdictLabel], object]]:
            pairs: list[tuple[JudgeRequest[VerdictLabel], object]] = []
            async with JudgeClient(config(fake, timeout=10.0, max_retries=0)) as judge:
                async for pair in judge.judge_each(requests):
                    pairs.append(pair)
                    if len(pairs) == 3:
                        fake.release("the rest came out")
            return pairs

        pairs = run(collect())

    assert len(pairs) == 4
    assert pairs[-1][0] is requests[0]
    assert {id(request) for request, _ in pairs} == {id(request) for request in requests}
    assert all(isinstance(outcome, JudgeCall) for _, outcome in pairs)


class TestDoubtWithoutLogprobs:
    """A server that sends no token logprobs: the verdict is asked again, sampled, and
    its confidence is the share of replies that agree with it (client.py's docstring)."""

    @staticmethod
    async def verdict(cfg: JudgeConfig) -> JudgeCall[Any]:
        async with JudgeClient(cfg) as judge:
            return await judge.judge(entailment_v2(passage="P", nugget="N"))

    def test_two_samples_one_disagreeing_give_two_thirds(self) -> None:
        replies = [Reply("true", prompt_tokens=100, completion_tokens=2),
                   Reply("true", prompt_tokens=100, completion_tokens=2),
                   Reply("false", prompt_tokens=100, completion_tokens=2)]
        with ScriptedServer(replies) as fake:
            call = run(self.verdict(config(fake, seed=7, doubt_samples=2)))
            greedy, *samples = fake.requests

        assert call.label is not None and call.label.verdict is True
        assert (call.confidence, call.confidence_from) == (pytest.approx(2 / 3), "samples")
        assert (greedy["temperature"], greedy["seed"]) == (0, 7)
        assert sorted((s["temperature"], s["seed"]) for s in samples) == [(1.0, 8), (1.0, 9)]
        # The samples' cost is the judgment's: three requests, three replies' tokens.
        assert (call.attempts, call.prompt_tokens, call.completion_tokens) == (3, 300, 6)

    def test_outvoted_the_greedy_verdict_keeps_an_even_chance(self) -> None:
        with ScriptedServer([Reply("true"), Reply("false"), Reply("false")]) as fake:
            call = run(self.verdict(config(fake, doubt_samples=2)))

        assert call.label is not None and call.label.verdict is True
        assert call.confidence == pytest.approx(0.5)

    def test_a_sample_that_does_not_parse_is_not_a_vote(self) -> None:
        with ScriptedServer([Reply("false"), Reply("maybe"), Reply("false")]) as fake:
            call = run(self.verdict(config(fake, doubt_samples=2)))

        assert call.label is not None and call.label.verdict is False
        assert call.confidence == pytest.approx(1.0)  # 2 of the 2 replies that parsed

    def test_with_no_samples_asked_for_the_doubt_stays_unmeasured(self) -> None:
        with ScriptedServer([Reply("true")]) as fake:
            call = run(self.verdict(config(fake, doubt_samples=0)))
            assert len(fake.requests) == 1

        assert (call.confidence, call.confidence_from) == (None, None)
