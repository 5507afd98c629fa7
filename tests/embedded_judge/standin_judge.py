"""A stand-in for the llama.cpp child of `EmbeddedJudge`: same start-up protocol, no model.

`python -m tests.embedded_judge.standin_judge --alias NAME` binds 127.0.0.1 on a port
the OS picks, says so on stdout as the real child does (`READY_PREFIX` + its address),
answers `/health` and `/v1/models` (listing NAME), says `true` to every chat completion
(enough for a judge client's entailment calls), and lives as the real child does
(`server.ChildLife`): until its stdin closes, or with `--record` until nobody holds
its lease for `--idle-seconds`; SIGTERM stops it either way. Each start appends its pid
to `--starts FILE`, so a test can count how many servers were started whatever process
started them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from embedded_judge.child import ChildLife, add_lease_arguments, lease_of
from embedded_judge.options import Lease, ServerOptions
from embedded_judge.server import EmbeddedJudge
from embedded_judge.shared import Launch


def standin_launch(starts: Path) -> Launch:
    """A `Launch` for `shared_judge` that starts this stand-in instead of llama.cpp."""

    def launch(model: str, var_dir: Path, lease: Lease, engine: str | None) -> EmbeddedJudge:
        return EmbeddedJudge(
            model, var_dir=var_dir, options=ServerOptions(n_parallel=3), startup_timeout=30,
            lease=lease, command=[sys.executable, "-m", "tests.embedded_judge.standin_judge",
                                  "--alias", model, "--starts", str(starts)])

    return launch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alias", required=True)
    parser.add_argument("--starts", type=Path, required=True)
    add_lease_arguments(parser)
    args = parser.parse_args()
    models = json.dumps({"object": "list", "data": [{"id": args.alias, "object": "model"}]})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = {"/health": '{"status": "ok"}', "/v1/models": models}.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write((body or "{}").encode())

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"model": args.alias, "choices": [{
                "index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "true"}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with args.starts.open("a") as starts:
        starts.write(f"{os.getpid()}\n")
    life = ChildLife(lease_of(args))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    life.announce(f"http://127.0.0.1:{server.server_address[1]}")
    life.stop.wait()
    server.shutdown()
    life.end()


if __name__ == "__main__":
    main()
