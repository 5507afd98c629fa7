"""The scripted OpenAI-compatible server: real HTTP on 127.0.0.1, answers from a responder.

For each POST /v1/chat/completions the server hands the parsed request (a `ChatRequest`)
to its responder, a callable that returns a step (replies.py), and serves that step.
GET /v1/models names one model; other GET paths are the `pages` given (the benchmark's
/stats, a judge's /metrics): what a page returns is sent as JSON, or as it is if text.
It is bounded: it listens on loopback only, refuses bodies over MAX_BODY (413) and
non-JSON ones (400), serves at most `slots` requests at once when told (the rest wait
for a slot, as at a real server's parallel slots), and every wait in it ends at its
teardown. A responder that raises is answered with a 500 that names the error.

It counts on a `Traffic`: the bodies received, the requests in flight and waiting and
their maxima. With `hold_until=N`, requests wait until N have been in flight at once, so
a client allowed N concurrent requests reaches N deterministically (`hold_timeout` only
bounds how long a test of a client that never gets there takes to fail). A responder
that tests read counts from, or that holds requests itself, extends `Traffic`: the server
then counts on it and waits on its lock (tests/grading/scripted_server/judge.py).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, Self, TypeVar, cast, overload

from tests.grading.scripted_server.replies import (
    ChatRequest,
    NoReply,
    RawBody,
    Reply,
    Status,
    Step,
    completion_body,
    error_body,
)

Responder = Callable[[ChatRequest], Step]
R = TypeVar("R", bound=Responder)

#: The largest request body served (the judge's prompts are a few kilobytes).
MAX_BODY = 4 * 1024 * 1024

#: How long a request waits for `hold_until` before it gives up: only a client that never
#: reaches that concurrency (a failing test) ever waits this long.
HOLD_LIMIT = 10.0


@dataclass(kw_only=True)
class Traffic:
    """What a server saw, and the condition every wait in it uses."""

    hold_until: int = 0
    hold_timeout: float = HOLD_LIMIT
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    waiting: int = 0  # for a slot
    max_waiting: int = 0
    released: set[str] = field(default_factory=set)
    stopping: bool = False
    lock: threading.Condition = field(default_factory=threading.Condition)

    def release(self, gate: str) -> None:
        """Let the replies waiting for `gate` (and later ones) be sent."""
        with self.lock:
            self.released.add(gate)
            self.lock.notify_all()


class InOrder:
    """A responder that serves `steps` one per request, in order; the last one repeats."""

    def __init__(self, steps: Iterable[Step]) -> None:
        self.steps = list(steps)
        if not self.steps:
            raise ValueError("give at least one step")
        self.served = 0
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Step:
        with self._lock:
            index = min(self.served, len(self.steps) - 1)
            self.served += 1
        return self.steps[index]


class _LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    # A client opening its whole pool at once (16 connections and more) must not find
    # the listen queue full: Linux would drop the connection and the client retry later.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up on a slow reply (its timeout: what the flaky judges of the
        # staging test inject) resets the connection; that is the point, not an error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass(frozen=True)
class _Answer:
    code: int
    data: bytes
    headers: dict[str, str] = field(default_factory=dict)


class ScriptedServer(Generic[R]):
    """The server; a context manager that starts and stops it on a free loopback port.

    `judge` is the responder, or a list of steps served in order (`InOrder`).
    `keep_requests=False` counts requests without keeping their bodies (a benchmark's
    tens of thousands).
    """

    @overload
    def __init__(self: ScriptedServer[InOrder], judge: Iterable[Step], *,
                 hold_until: int = ..., hold_timeout: float = ..., slots: int | None = ...,
                 keep_requests: bool = ...,
                 pages: Mapping[str, Callable[[], Any]] | None = ...) -> None: ...

    @overload
    def __init__(self, judge: R, *, hold_until: int = ..., hold_timeout: float = ...,
                 slots: int | None = ..., keep_requests: bool = ...,
                 pages: Mapping[str, Callable[[], Any]] | None = ...) -> None: ...

    def __init__(
        self,
        judge: R | Iterable[Step],
        *,
        hold_until: int = 0,
        hold_timeout: float = HOLD_LIMIT,
        slots: int | None = None,
        keep_requests: bool = True,
        pages: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self.judge = cast(R, judge if callable(judge) else InOrder(judge))
        self._own_traffic = Traffic()  # used unless the judge keeps its own
        if hold_until:
            self.traffic.hold_until = hold_until
        self.traffic.hold_timeout = hold_timeout
        self.slots = threading.BoundedSemaphore(slots) if slots else None
        self.keep_requests = keep_requests
        self.pages = dict(pages or {})
        self._server = _LoopbackServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def traffic(self) -> Traffic:
        # Read through the judge on every request: a test may swap a judge's fields (its
        # lock among them) while the server runs.
        return self.judge if isinstance(self.judge, Traffic) else self._own_traffic

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received, in arrival order."""
        with self.traffic.lock:
            return list(self.traffic.requests)

    @property
    def max_in_flight(self) -> int:
        with self.traffic.lock:
            return self.traffic.max_in_flight

    def release(self, gate: str) -> None:
        """Let the replies waiting for `gate` (and later ones) be sent."""
        self.traffic.release(gate)

    def __enter__(self) -> Self:
        with self.traffic.lock:  # a judge may serve again, from a new server
            self.traffic.stopping = False
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        traffic = self.traffic
        with traffic.lock:  # let held requests end (their clients are gone or going)
            traffic.stopping = True
            traffic.lock.notify_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer(self, body: dict[str, Any]) -> _Answer | None:
        """The answer to one chat request, or None for a request left unanswered."""
        if self.slots is None:
            return self._answer_in_slot(body)
        traffic = self.traffic
        with traffic.lock:
            traffic.waiting += 1
            traffic.max_waiting = max(traffic.max_waiting, traffic.waiting)
            traffic.lock.notify_all()
        with self.slots:
            with traffic.lock:
                traffic.waiting -= 1
            return self._answer_in_slot(body)

    def _answer_in_slot(self, body: dict[str, Any]) -> _Answer | None:
        traffic = self.traffic
        taken = time.perf_counter()
        request = ChatRequest(body=body)
        with traffic.lock:
            if self.keep_requests:
                traffic.requests.append(body)
            traffic.in_flight += 1
            traffic.max_in_flight = max(traffic.max_in_flight, traffic.in_flight)
            traffic.lock.notify_all()
        try:
            try:
                step = self.judge(request)
            except Exception as error:  # a broken script: say so to the client
                return _json_answer(500, {"error": {
                    "message": f"the responder failed: {error!r}", "type": "scripted"}})
            with traffic.lock:
                traffic.lock.wait_for(
                    lambda: traffic.max_in_flight >= traffic.hold_until or traffic.stopping,
                    timeout=traffic.hold_timeout)
                # A NoReply waits for the teardown; a gated step for its gate (or that).
                gate = None if isinstance(step, NoReply) else step.after
                if isinstance(step, NoReply) or gate is not None:
                    traffic.lock.wait_for(lambda: traffic.stopping or gate in traffic.released)
            if isinstance(step, NoReply):
                return None
            answer = _step_answer(step, request)
            if step.latency:
                # The modelled GPU time: the slot is held `latency` seconds in all, this
                # server's own work on the request included, so C / latency is its ideal.
                time.sleep(max(0.0, taken + step.latency - time.perf_counter()))
            return answer
        finally:
            with traffic.lock:
                traffic.in_flight -= 1
                traffic.lock.notify_all()


def _json_answer(code: int, payload: Any, headers: dict[str, str] | None = None) -> _Answer:
    return _Answer(code, json.dumps(payload).encode(), headers or {})


def _step_answer(step: Reply | Status | RawBody, request: ChatRequest) -> _Answer:
    if isinstance(step, RawBody):
        return _Answer(200, step.body)
    if isinstance(step, Reply):
        return _json_answer(200, completion_body(step, request))
    headers = {} if step.retry_after is None else {"Retry-After": str(step.retry_after)}
    return _json_answer(step.code, error_body(step), headers)


def _handler_for(server: ScriptedServer[Any]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The head and the body leave in one segment, at once: written apart, Nagle's
        # algorithm would hold the body until the client's delayed ACK (~40 ms a reply).
        wbufsize = -1
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            page = server.pages.get(path)
            if page is not None:
                content = page()
                # Text as it is (a Prometheus exposition); anything else as JSON.
                self._send(_Answer(200, content.encode(), {"Content-Type": "text/plain"})
                           if isinstance(content, str) else _json_answer(200, content))
            elif path == "/v1/models":
                self._send(_json_answer(200, {"object": "list", "data": [
                    {"id": "scripted", "object": "model"}]}))
            else:
                self._send(_json_answer(404, {"error": {"message": f"no route {path}"}}))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.close_connection = True  # the body is left unread
                self._send(_json_answer(413, {"error": {
                    "message": f"the request body is over {MAX_BODY} bytes"}}))
                return
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(_json_answer(404, {"error": {"message": f"no route {self.path}"}}))
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            if not isinstance(body, dict):
                self._send(_json_answer(400, {"error": {
                    "message": "the request body is not a JSON object"}}))
                return
            answer = server.answer(body)
            if answer is None:
                self.close_connection = True  # nothing to say; the client is long gone
                return
            self._send(answer)

        def _send(self, answer: _Answer) -> None:
            try:
                self.send_response(answer.code)
                headers = {"Content-Type": "application/json", **answer.headers}
                self.send_header("Content-Length", str(len(answer.data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(answer.data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a scripted timeout, a killed worker)

    return Handler
