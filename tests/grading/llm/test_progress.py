"""A reply slower than the client's timeout is waited for while the judge's server shows
progress (its /metrics counters rise); a server that shows none is given up on, and the
failure names the setting to change (grading.llm.progress, JudgeClient)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from grading.llm.calls import JudgeCall, JudgeConfig, JudgeError
from grading.llm.client import TIMED_OUT_UNWATCHED, JudgeClient
from grading.llm.progress import work_done
from grading.llm.subtasks import entailment_v2
from tests.grading.scripted_server import NoReply, Reply, ScriptedServer

ENTAILED = "true"
#: The client's timeout here: a few rounds of it pass before the slow reply comes.
TIMEOUT = 0.2
SLOW = "slow"


class Counters:
    """A /metrics page in llama.cpp's words: its decode counter rises at every read while
    the server `works`; after `reply_after` reads the slow reply is let go (its gate)."""

    def __init__(self, *, works: bool, reply_after: int = 3) -> None:
        self.works, self.reply_after = works, reply_after
        self.reads = self.decoded = 0
        self.server: ScriptedServer[Any] | None = None

    def __call__(self) -> str:
        self.reads += 1
        self.decoded += self.works
        if self.reads >= self.reply_after and self.server is not None:
            self.server.release(SLOW)
        return (f"# TYPE llamacpp:n_decode_total counter\n"
                f"llamacpp:n_decode_total {self.decoded}\n")


def judged(fake: ScriptedServer[Any], **overrides: Any) -> JudgeCall[Any]:
    config = JudgeConfig(**{"base_url": fake.base_url, "model": "fake-judge",
                            "timeout": TIMEOUT, "max_retries": 0, "doubt_samples": 0,
                            **overrides})

    async def judge() -> JudgeCall[Any]:
        async with JudgeClient(config) as client:
            return await client.judge(entailment_v2(passage="P", nugget="N"))

    return asyncio.run(judge())


def test_a_reply_slower_than_the_timeout_is_waited_for_while_the_server_works() -> None:
    counters = Counters(works=True)
    with ScriptedServer([Reply(ENTAILED, after=SLOW)], pages={"/metrics": counters}) as fake:
        counters.server = fake
        call = judged(fake)

    assert call.label is not None and call.label.verdict is True
    assert call.attempts == 1  # one request, waited for over several timeouts
    assert counters.reads >= 3 and call.latency > 2 * TIMEOUT


def test_a_server_whose_counters_stand_still_is_given_up_on_and_the_setting_named() -> None:
    counters = Counters(works=False, reply_after=10**6)
    with ScriptedServer([NoReply()], pages={"/metrics": counters}) as fake:
        counters.server = fake
        with pytest.raises(JudgeError) as failed:
            judged(fake)

    message = str(failed.value)
    assert "the judge's server showed no progress meanwhile" in message
    assert f"GRADER_TIMEOUT is {TIMEOUT:g} s" in message
    assert counters.reads == 2  # one reading per round: the second saw no change


def test_a_server_without_counters_is_given_up_on_after_one_timeout() -> None:
    with ScriptedServer([NoReply()]) as fake, pytest.raises(JudgeError) as failed:
        judged(fake)

    assert TIMED_OUT_UNWATCHED.format(timeout=TIMEOUT) in str(failed.value)
    assert "raise GRADER_TIMEOUT" in str(failed.value)


@pytest.mark.parametrize(("exposition", "work"), [
    # llama.cpp's own words (tools/server/server-task.cpp), counters only.
    ("# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed\n"
     "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 220\n"
     "llamacpp:tokens_predicted_total 64\nllamacpp:n_decode_total 3\n"
     "llamacpp:requests_processing 1\n", 287.0),
    # vLLM's, with labels.
    ('vllm:prompt_tokens_total{engine="0",model_name="m"} 1024.0\n'
     'vllm:generation_tokens_total{engine="0",model_name="m"} 32.0\n'
     'process_cpu_seconds_total 12.5\n', 1056.0),
    ("", None),
    ("<html>404 Not Found</html>", None),
])
def test_the_work_counters_are_read_off_either_server(exposition: str,
                                                      work: float | None) -> None:
    assert work_done(exposition) == work
