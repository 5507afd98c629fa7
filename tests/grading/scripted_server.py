"""A scripted OpenAI-compatible judge server on loopback (real HTTP, for the pipeline tests).

`ScriptedJudge.reply` decides each answer from the request: the tests say which
nuggets are entailed and which answers are correct, as a human would write a marked
run. Faults (timeouts, 500s, 429s, malformed JSON) can be scripted per input.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Fault = str  # "timeout", "500", "429", "garbage"


@dataclass
class ScriptedJudge:
    """What the judge says. Keys are nugget texts (entailment) and answer texts (answers)."""

    entailed: dict[str, bool] = field(default_factory=dict)
    correct: dict[str, bool] = field(default_factory=dict)
    relevant: dict[str, list[int]] = field(default_factory=dict)
    # key (nugget or answer text) -> faults to serve, one per request, before answering.
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    delay: float = 0.0
    calls: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str]:
        """(status, chat completion or error body, the content) for one request."""
        user = body["messages"][-1]["content"]
        if user.startswith("PASSAGE:"):
            # The nugget is the last labelled section (passages hold no line breaks).
            key = user.rsplit("\n\n", 1)[1].split("\n", 1)[1].strip()
            content = {"reason": "scripted", "entailed": self.entailed.get(key, True)}
        else:
            key = user.split("ANSWER:\n", 1)[1].split("\n\nNUGGETS:", 1)[0].strip()
            shown = [int(n) for n in re.findall(r"^\[(\d+)\]", user, flags=re.M)]
            correct = self.correct.get(key, False)
            relevant = [n for n in self.relevant.get(key, []) if n in shown] if correct else []
            content = {"reason": "scripted", "correct": correct,
                       "nugget_reasons": {str(n): "scripted" for n in shown},
                       "relevant": relevant}
        with self.lock:
            self.calls[key] += 1
            pending = self.faults.get(key)
            fault = pending.pop(0) if pending else None
        if fault == "500":
            return 500, {"error": {"message": "scripted failure"}}, ""
        if fault == "429":
            return 429, {"error": {"message": "slow down"}}, ""
        if fault == "timeout":
            time.sleep(2.0)  # longer than the tests' client timeout
        text = "this is not JSON {" if fault == "garbage" else json.dumps(content)
        return 200, {
            "id": "scripted", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": len(text) // 4,
                      "total_tokens": (len(user) + len(text)) // 4},
        }, text


class ScriptedServer:
    """Serves a ScriptedJudge at http://127.0.0.1:PORT/v1 until stopped."""

    def __init__(self, judge: ScriptedJudge) -> None:
        self.judge = judge
        script = judge

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with script.lock:
                    script.in_flight += 1
                    script.max_in_flight = max(script.max_in_flight, script.in_flight)
                try:
                    if script.delay:
                        time.sleep(script.delay)
                    status, payload, _ = script.reply(body)
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
                    pass  # the client gave up (a scripted timeout)

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
        self.httpd.shutdown()
        self.httpd.server_close()
