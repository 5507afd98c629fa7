"""A scripted OpenAI-compatible server on 127.0.0.1 for judge tests (real HTTP).

It serves POST /v1/chat/completions from a script of steps, in order, or from a
`responder` that picks a step for each request body (e.g. by reading the prompt):
- `Reply(content)`: a 200 chat completion with that message content and usage;
- `Status(code)`: an error status with an OpenAI-style error body (and Retry-After);
- `RawBody(body)`: a 200 with that body, whatever it is;
- `NoReply()`: no answer at all while the server runs, so the client's timeout fires
  whatever its length and however loaded the machine; the server's teardown ends it;
and each of the first three may carry `after`, the name of a gate the server waits for
before answering: `fake.release(name)` opens it (so does the teardown). When the script
runs out, the last step repeats. Nothing waits on the clock, so outcomes do not depend
on scheduling.

It records every request body and the most requests it had in flight at once. With
`hold_until=N`, requests wait until N have been in flight at once, so a client allowed
N concurrent requests reaches N deterministically (`hold_timeout` only bounds how long
a test of a client that never gets there takes to fail).

Usage (also as the `fake_openai` fixture):

    with FakeOpenAI([Status(500), Reply('{"entailed": true, "reason": "r"}')]) as fake:
        config = JudgeConfig(base_url=fake.base_url, model="fake-judge", ...)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


@dataclass(frozen=True)
class Reply:
    """A successful chat completion whose message content is `content`."""

    content: str
    prompt_tokens: int = 120
    completion_tokens: int = 20
    finish_reason: str = "stop"
    after: str | None = None


@dataclass(frozen=True)
class Status:
    """An HTTP error answer."""

    code: int
    message: str = "scripted failure"
    retry_after: float | None = None
    after: str | None = None


@dataclass(frozen=True)
class RawBody:
    """A 200 whose body is `body` as is (a broken server or proxy)."""

    body: bytes
    after: str | None = None


@dataclass(frozen=True)
class NoReply:
    """A request the server never answers while it runs (the client times out)."""


Step = Reply | Status | RawBody | NoReply


@dataclass
class _State:
    steps: list[Step]
    responder: Callable[[dict[str, Any]], Step] | None
    hold_until: int
    hold_timeout: float
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    served: int = 0
    released: set[str] = field(default_factory=set)
    stopping: bool = False
    lock: threading.Condition = field(default_factory=threading.Condition)

    def next_step(self, body: dict[str, Any]) -> Step:
        if self.responder is not None:
            return self.responder(body)
        index = min(self.served, len(self.steps) - 1)
        self.served += 1
        return self.steps[index]


class FakeOpenAI:
    """The server; a context manager that starts and stops it on a free port."""

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        responder: Callable[[dict[str, Any]], Step] | None = None,
        hold_until: int = 0,
        hold_timeout: float = 10.0,
    ) -> None:
        steps = list(steps)
        if not steps and responder is None:
            raise ValueError("give a script of steps or a responder")
        self.state = _State(steps=steps, responder=responder, hold_until=hold_until,
                            hold_timeout=hold_timeout)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self.state))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received, in arrival order."""
        with self.state.lock:
            return list(self.state.requests)

    @property
    def max_in_flight(self) -> int:
        with self.state.lock:
            return self.state.max_in_flight

    def release(self, gate: str) -> None:
        """Let the replies waiting for `gate` (and later ones) be sent."""
        with self.state.lock:
            self.state.released.add(gate)
            self.state.lock.notify_all()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with self.state.lock:  # let held requests end
            self.state.stopping = True
            self.state.lock.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def completion(content: str, *, model: str, prompt_tokens: int = 120,
               completion_tokens: int = 20, finish_reason: str = "stop") -> dict[str, Any]:
    """An OpenAI chat-completion body."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _handler_for(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            with state.lock:
                state.requests.append(body)
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
                state.lock.notify_all()
                step = state.next_step(body)
                state.lock.wait_for(
                    lambda: state.max_in_flight >= state.hold_until or state.stopping,
                    timeout=state.hold_timeout)
                # A NoReply waits for the teardown; a gated reply for its gate (or that).
                gate = None if isinstance(step, NoReply) else step.after
                if isinstance(step, NoReply) or gate is not None:
                    state.lock.wait_for(lambda: state.stopping or gate in state.released)
            if isinstance(step, NoReply):
                self.close_connection = True  # nothing to say; the client is long gone
                with state.lock:
                    state.in_flight -= 1
                    state.lock.notify_all()
                return
            try:
                if isinstance(step, RawBody):
                    self._send_bytes(200, step.body)
                elif isinstance(step, Reply):
                    self._send(200, completion(
                        step.content, model=str(body.get("model")),
                        prompt_tokens=step.prompt_tokens,
                        completion_tokens=step.completion_tokens,
                        finish_reason=step.finish_reason))
                else:
                    headers = {}
                    if step.retry_after is not None:
                        headers["Retry-After"] = str(step.retry_after)
                    self._send(step.code, {"error": {"message": step.message,
                                                     "type": "scripted"}}, headers)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a scripted timeout)
            finally:
                with state.lock:
                    state.in_flight -= 1
                    state.lock.notify_all()

        def _send(self, code: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
            self._send_bytes(code, json.dumps(payload).encode(), headers)

        def _send_bytes(self, code: int, data: bytes,
                        headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
