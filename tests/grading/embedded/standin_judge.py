"""A stand-in for the llama.cpp child of `EmbeddedJudge`: same start-up protocol, no model.

`python -m tests.grading.embedded.standin_judge --alias NAME` binds 127.0.0.1 on a port
the OS picks, says so on stdout as the real child does (`READY_PREFIX` + its address),
answers `/health` and `/v1/models` (listing NAME), and exits when its stdin closes or
on SIGTERM, as the real child does. Each start appends its pid to `--starts FILE`, so a
test can count how many servers were started whatever process started them.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from grading.embedded.server import READY_PREFIX, EmbeddedJudge, ServerOptions
from grading.embedded.shared import Launch


def standin_launch(starts: Path) -> Launch:
    """A `Launch` for `shared_judge` that starts this stand-in instead of llama.cpp."""

    def launch(model: str, var_dir: Path) -> EmbeddedJudge:
        return EmbeddedJudge(
            model, var_dir=var_dir, options=ServerOptions(n_parallel=3), startup_timeout=30,
            command=[sys.executable, "-m", "tests.grading.embedded.standin_judge",
                     "--alias", model, "--starts", str(starts)])

    return launch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alias", required=True)
    parser.add_argument("--starts", type=Path, required=True)
    args = parser.parse_args()
    models = json.dumps({"object": "list", "data": [{"id": args.alias, "object": "model"}]})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = {"/health": '{"status": "ok"}', "/v1/models": models}.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write((body or "{}").encode())

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with args.starts.open("a") as starts:
        starts.write(f"{os.getpid()}\n")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())

    def watch_stdin() -> None:
        while sys.stdin.readline():
            pass
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    address = f"http://127.0.0.1:{server.server_address[1]}"
    print(READY_PREFIX + json.dumps({"address": address}), flush=True)
    stop.wait()
    server.shutdown()


if __name__ == "__main__":
    main()
