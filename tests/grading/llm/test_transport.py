"""The judge client's HTTP seam, both transports, against the scripted server (real HTTP)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from grading.llm.calls import JudgeConfig, JudgeError
from grading.llm.client import JudgeClient
from grading.llm.subtasks import entailment_v2
from grading.llm.transport import (
    TRANSPORTS,
    UNKNOWN_TRANSPORT,
    NoAnswer,
    TransportSettings,
    available_transports,
    make_transport,
)
from tests.grading.scripted_server import NoReply, Reply, ScriptedServer, Status

ENTAILED = "true"

#: The client timeout where a timeout is under test (see tests/grading/llm/test_client.py).
GIVES_UP_AFTER = 1.0

installed = pytest.mark.parametrize("transport", available_transports())


def settings_for(fake: ScriptedServer) -> TransportSettings:
    return TransportSettings(base_url=fake.base_url, api_key="sk-test", connect_timeout=30,
                             connections=4)


async def post_once(name: str, settings: TransportSettings, body: bytes) -> Any:
    transport = make_transport(name, settings)
    try:
        return await transport.post("chat/completions", body)
    finally:
        await transport.aclose()


def test_auto_picks_aiohttp_where_it_is_installed() -> None:
    # aiohttp costs the least CPU per call (bench/bench_grading.py); httpx comes with
    # the openai package, so it is always there to fall back on.
    pytest.importorskip("aiohttp", reason="aiohttp is not installed: httpx is used")
    assert available_transports() == list(TRANSPORTS)
    settings = TransportSettings(base_url="http://127.0.0.1:9/v1", api_key="",
                                 connect_timeout=1, connections=1)
    assert type(make_transport("auto", settings)).__name__ == "AiohttpTransport"


@installed
def test_it_posts_the_body_with_the_key_and_returns_the_answer(transport: str) -> None:
    with ScriptedServer([Reply(ENTAILED)]) as fake:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "é"}]})
        answer = asyncio.run(post_once(transport, settings_for(fake), body.encode()))
        (received,) = fake.requests

    assert answer.status == 200
    assert json.loads(answer.body)["choices"][0]["message"]["content"] == ENTAILED
    assert received["messages"] == [{"role": "user", "content": "é"}]


@installed
def test_an_error_status_is_an_answer_with_its_retry_after(transport: str) -> None:
    with ScriptedServer([Status(429, "slow down", retry_after=2)]) as fake:
        answer = asyncio.run(post_once(transport, settings_for(fake), b"{}"))

    assert (answer.status, answer.retry_after) == (429, "2")
    assert json.loads(answer.body)["error"]["message"] == "slow down"


@installed
def test_it_gets_the_server_s_counters_beside_its_api_prefix(transport: str) -> None:
    metrics = "llamacpp:n_decode_total 7\n"
    with ScriptedServer([Reply(ENTAILED)], pages={"/metrics": lambda: metrics}) as fake:
        settings = settings_for(fake)

        async def get() -> Any:
            http = make_transport(transport, settings)
            try:
                return await http.get(settings.metrics_url)
            finally:
                await http.aclose()

        answer = asyncio.run(get())

    assert settings.metrics_url == f"http://127.0.0.1:{fake.port}/metrics"
    assert (answer.status, answer.body.decode()) == (200, metrics)


@installed
def test_a_server_that_is_gone_is_a_connection_failure(transport: str) -> None:
    with ScriptedServer([Reply(ENTAILED)]) as fake:
        settings = settings_for(fake)
    with pytest.raises(NoAnswer) as failed:
        asyncio.run(post_once(transport, settings, b"{}"))

    assert failed.value.timed_out is False


def test_an_unknown_transport_is_refused_by_name() -> None:
    settings = TransportSettings(base_url="http://127.0.0.1:9/v1", api_key="",
                                 connect_timeout=1, connections=1)
    with pytest.raises(ValueError) as refused:
        make_transport("carrier-pigeon", settings)
    assert str(refused.value) == UNKNOWN_TRANSPORT.format(name="carrier-pigeon",
                                                          names="aiohttp, httpx")


@installed
@pytest.mark.parametrize("steps, attempts", [
    ([Status(503), Reply(ENTAILED)], 2),
    ([NoReply(), Reply(ENTAILED)], 2),
], ids=["server error", "timeout"])
def test_the_client_retries_alike_on_either_transport(transport: str, steps: list[Any],
                                                      attempts: int) -> None:
    with ScriptedServer(steps) as fake:
        config = JudgeConfig(base_url=fake.base_url, model="fake-judge", concurrency=2,
                             timeout=GIVES_UP_AFTER, backoff_initial=0.01, backoff_max=0.05,
                             transport=transport, doubt_samples=0)

        async def judge() -> Any:
            async with JudgeClient(config) as client:
                return await client.judge(entailment_v2(passage="P", nugget="N"))

        call = asyncio.run(judge())

    assert call.label is not None and call.label.verdict is True
    assert call.attempts == attempts


@installed
def test_a_refusal_is_permanent_and_quotes_the_server_on_either_transport(
    transport: str,
) -> None:
    with ScriptedServer([Status(401, "Incorrect API key provided.")]) as fake:
        config = JudgeConfig(base_url=fake.base_url, model="fake-judge", transport=transport,
                             doubt_samples=0)

        async def judge() -> Any:
            async with JudgeClient(config) as client:
                return await client.judge(entailment_v2(passage="P", nugget="N"))

        with pytest.raises(JudgeError) as refused:
            asyncio.run(judge())

    assert refused.value.permanent is True and refused.value.status == 401
    assert str(refused.value) == ("entailment judgment refused by the server (HTTP 401): "
                                  "Incorrect API key provided.")
