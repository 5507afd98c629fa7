"""A scripted OpenAI-compatible judge server on loopback (real HTTP, for the pipeline tests).

`ScriptedJudge.reply` decides each answer from the request: the tests say which
nuggets are entailed, which answers are correct and which nuggets are relevant to them,
as a human would write a marked run. It tells the judge's subtasks (grading/llm/
subtasks.py) apart by their reply schema's name, answers with token logprobs carrying
the scripted probability of its verdict, and writes "scripted" when asked for a reason.
Faults (timeouts, 500s, 429s, malformed JSON, and the refusals of a misconfigured
judge: 401 for a bad API key, 404 for an unknown model) can be scripted per input.

Nothing here waits on the clock: a request that must wait (a scripted timeout, a held
answer) waits on a condition that a test or the server's teardown fulfils, so the
outcome is the same on an idle machine and on one busy core.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Fault = str  # "timeout", "500", "429", "garbage", "401", "404"

#: What OpenAI-compatible servers say when they refuse a request (vLLM and OpenAI alike).
BAD_API_KEY = "Incorrect API key provided: sk-wr***ng."
UNKNOWN_MODEL = "The model `{model}` does not exist."

#: The judge's probability for a verdict where a test scripts none: above any threshold.
SURE = 0.99

#: How long a request waits for `hold_until` before it gives up: only a client that never
#: reaches that concurrency (a failing test) ever waits this long.
HOLD_LIMIT = 10.0


@dataclass
class ScriptedJudge:
    """What the judge says. Keys are nugget texts (entailment) and answer texts (answers).

    `relevant` maps an answer to the texts of the nuggets relevant to it. `sure` maps a
    key (nugget or answer text) to the judge's probability for its verdict there;
    elsewhere it is SURE. A relevance call's key, for calls, faults and `sure`, is
    "relevance:" and the nugget text.
    """

    entailed: dict[str, bool] = field(default_factory=dict)
    correct: dict[str, bool] = field(default_factory=dict)
    relevant: dict[str, list[str]] = field(default_factory=dict)
    sure: dict[str, float] = field(default_factory=dict)
    # key (nugget or answer text) -> faults to serve, one per request, before answering.
    # A "timeout" is never answered while the server runs, so the client's timeout fires.
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    # Requests wait until this many have been in flight at once, so a client allowed that
    # many reaches it whatever the scheduling.
    hold_until: int = 0
    # While set, answer requests wait (after setting `answer_arrived`) until
    # `release_answers()`: the entailment step is over and the answer step under way.
    hold_answers: bool = False
    answer_arrived: threading.Event = field(default_factory=threading.Event)
    # False: a server that sends no token logprobs (the client then samples to measure
    # doubt). `sampled` maps a key to the verdicts of its sampled replies (temperature
    # > 0), served in order; elsewhere a sampled reply repeats the verdict.
    logprobs: bool = True
    sampled: dict[str, list[bool]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Condition = field(default_factory=threading.Condition)

    def release_answers(self) -> None:
        """Let held answer requests (and later ones) through."""
        with self.lock:
            self.hold_answers = False
            self.lock.notify_all()

    def reply(self, body: dict[str, Any], *, stopping: threading.Event
              ) -> tuple[int, dict[str, Any] | None, str]:
        """(status, chat completion or error body, the content) for one request.

        Waits, where the script says so, until `stopping` is set (the server's teardown).
        """
        user = body["messages"][-1]["content"]
        schema = body["response_format"]["json_schema"]
        name = schema["name"].removeprefix("r2c2_")
        explaining = name.endswith("_reason")
        verdict_field = name.removesuffix("_reason")
        is_answer = verdict_field == "correct"
        if verdict_field == "entailed":
            key = user.split("CLAIM:\n", 1)[1].split("\n\n", 1)[0].strip()
            verdict = self.entailed.get(key, True)
        elif verdict_field == "correct":
            # "\n\nANSWER:" and not "ANSWER:", which "GOLD ANSWER:" also holds.
            key = user.split("\n\nANSWER:\n", 1)[1].split("\n\n", 1)[0].strip()
            verdict = self.correct.get(key, False)
        else:
            answer = user.split("\n\nANSWER:\n", 1)[1].split("\n\nNUGGET:\n", 1)[0].strip()
            nugget = user.split("NUGGET:\n", 1)[1].split("\n\n", 1)[0].strip()
            key = f"relevance:{nugget}"
            verdict = nugget in self.relevant.get(answer, [])
        is_sample = float(body.get("temperature") or 0) > 0
        if is_sample and not explaining:
            with self.lock:
                pending_samples = self.sampled.get(key)
                if pending_samples:
                    verdict = pending_samples.pop(0)
        content: Any = verdict
        if explaining:
            content = {verdict_field: schema["schema"]["properties"][verdict_field]["enum"][0],
                       "reason": "scripted"}
            key = f"explain:{key}"
        probability = self.sure.get(key, SURE)
        with self.lock:
            self.calls[key] += 1
            pending = self.faults.get(key)
            fault = pending.pop(0) if pending else None
            if is_answer and self.hold_answers:
                self.answer_arrived.set()
                self.lock.wait_for(lambda: not self.hold_answers or stopping.is_set())
            if fault == "timeout":
                # Never answered while the client waits: its timeout fires first, however
                # slowly the machine runs; the teardown lets this thread end.
                self.lock.wait_for(stopping.is_set)
        if fault == "500":
            return 500, {"error": {"message": "scripted failure"}}, ""
        if fault == "429":
            return 429, {"error": {"message": "slow down"}}, ""
        if fault == "401":
            return 401, {"error": {"message": BAD_API_KEY, "type": "invalid_request_error",
                                   "code": "invalid_api_key"}}, ""
        if fault == "404":
            message = UNKNOWN_MODEL.format(model=body.get("model"))
            return 404, {"error": {"message": message, "type": "NotFoundError",
                                   "code": "model_not_found"}}, ""
        text = "this is not JSON {" if fault == "garbage" else json.dumps(content)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}
        if body.get("logprobs") and self.logprobs and not explaining:
            choice["logprobs"] = {"content": verdict_logprobs(verdict_field, verdict,
                                                              probability)}
        return 200, {
            "id": "scripted", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [choice],
            "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": len(text) // 4,
                      "total_tokens": (len(user) + len(text)) // 4},
        }, text


def verdict_logprobs(field: str, verdict: bool, probability: float) -> list[dict[str, Any]]:
    """The token of a bare `true`/`false` reply as llama.cpp reports it: the verdict
    carrying `probability`, its alternative the rest (`field` is not in the reply)."""
    chosen, other = ("true", "false") if verdict else ("false", "true")
    alternatives = [{"token": chosen, "logprob": math.log(probability), "bytes": None}]
    if probability < 1:
        alternatives.append({"token": other, "logprob": math.log(1 - probability),
                             "bytes": None})
    return [{"token": chosen, "logprob": math.log(probability), "bytes": None,
             "top_logprobs": alternatives}]


class ScriptedServer:
    """Serves a ScriptedJudge at http://127.0.0.1:PORT/v1 until stopped."""

    def __init__(self, judge: ScriptedJudge) -> None:
        self.judge = judge
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                # Read through the server: a test may swap the judge's fields meanwhile.
                script = server.judge
                with script.lock:
                    script.in_flight += 1
                    script.max_in_flight = max(script.max_in_flight, script.in_flight)
                    script.lock.notify_all()
                    script.lock.wait_for(
                        lambda: script.max_in_flight >= script.hold_until
                        or server.stopping.is_set(), timeout=HOLD_LIMIT)
                try:
                    status, payload, _ = script.reply(body, stopping=server.stopping)
                finally:
                    with script.lock:
                        script.in_flight -= 1
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a scripted timeout, a killed worker)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # Let held requests end (their clients are gone or about to be).
        self.stopping.set()
        with self.judge.lock:
            self.judge.lock.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()
