"""One scripted OpenAI-compatible chat server for the judge's tests and the benchmarks.

Real HTTP on 127.0.0.1 (server.py); each request goes to a responder, a callable given
the parsed request (replies.ChatRequest) that returns what to serve: a reply with its
content and logprobs, an error status, a raw body, or no reply at all (replies.py).
A list of steps is served in order; `ScriptedJudge` (judge.py) answers the R2C2
subtasks as a test scripts them; the grading benchmark's responder decides by a hash of
the prompt (bench/grading_bench/judge_server.py).

Usage (also as the `server` and `session_judge` fixtures):

    with ScriptedServer([Status(500), Reply('{"entailed": true, "reason": "r"}')]) as fake:
        config = JudgeConfig(base_url=fake.base_url, model="fake-judge", ...)

    with ScriptedServer(ScriptedJudge(entailed={"Mars is red.": False})) as server:
        ...
"""

from tests.grading.scripted_server.judge import SURE, ScriptedJudge
from tests.grading.scripted_server.replies import (
    BAD_API_KEY,
    UNKNOWN_MODEL,
    ChatRequest,
    NoReply,
    RawBody,
    Reply,
    Status,
    Step,
)
from tests.grading.scripted_server.server import InOrder, Responder, ScriptedServer, Traffic

__all__ = [
    "BAD_API_KEY",
    "SURE",
    "UNKNOWN_MODEL",
    "ChatRequest",
    "InOrder",
    "NoReply",
    "RawBody",
    "Reply",
    "Responder",
    "ScriptedJudge",
    "ScriptedServer",
    "Status",
    "Step",
    "Traffic",
]
