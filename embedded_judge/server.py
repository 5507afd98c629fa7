"""The embedded judge from the outside: a llama.cpp server for a packaged model started in a
child process and waited for until healthy, and the command line that serves one
(docs/judging.md, "The engine")."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self, TextIO

from embedded_judge.child import add_lease_arguments, lease_of, serve_child, serve_forever
from embedded_judge.engines import NATIVE, PREBUILT, chosen_engine, engine_environment
from embedded_judge.models import DEFAULT_MODEL, MODELS, ModelInstallError, ensure_model
from embedded_judge.options import READY_PREFIX, Lease, ServerOptions, is_healthy, server_log_path

logger = logging.getLogger(__name__)

SERVER_EXITED = "the embedded judge exited with code {code} while starting; log {log}:\n{tail}"
SERVER_NOT_READY = "the embedded judge did not become ready in {seconds:.0f} s; log {log}:\n{tail}"
# The package root, so the child can import `grading` whatever its working directory.
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


class EmbeddedJudge:
    """A llama.cpp server for a packaged model in a child process, as a context manager; with a
    `lease` it lives on its own once started. `command` replaces the child's (tests' stand-ins)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        var_dir: Path,
        options: ServerOptions | None = None,
        startup_timeout: float = 300.0,
        log_path: Path | None = None,
        progress: TextIO | None = sys.stderr,
        command: Sequence[str] | None = None,
        lease: Lease | None = None,
        engine: str | None = None,
    ) -> None:
        self.model = model
        self.var_dir = Path(var_dir)
        self.options = options or ServerOptions()
        self.startup_timeout = startup_timeout
        self.log_path = log_path or server_log_path(self.var_dir)
        self.progress = progress
        self.command = list(command) if command is not None else None
        self.lease = lease
        self.engine = engine
        self.engine_name = ""  # the engine it runs, once started
        self._process: subprocess.Popen[str] | None = None
        self._address: str | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root, e.g. "http://127.0.0.1:41234/v1"."""
        if self._address is None:
            raise RuntimeError("the embedded judge is not running")
        return f"{self._address}/v1"

    @property
    def pid(self) -> int:
        """The server process's id."""
        return self._running().pid

    def exit_code(self) -> int | None:
        """The server's exit code once it has exited, else None."""
        return self._running().poll()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> Self:
        """Install the model if needed, start the server and wait until it is healthy.
        A native build that fails to start, unless asked for by name, yields to the prebuilt."""
        if self._process is not None:
            return self
        command = self.command or self._child_command(
            ensure_model(self.model, var_dir=self.var_dir, progress=self.progress))
        if self.lease is not None:
            command = [*command, *self.lease.as_args()]
        engine = chosen_engine(self.engine, var_dir=self.var_dir)
        try:
            return self._started(command, engine)
        except RuntimeError as error:
            if engine != NATIVE or self.engine == NATIVE:
                raise
            logger.warning("the native engine did not start, so the prebuilt one serves: %s",
                           error)
            return self._started(command, PREBUILT)

    def _started(self, command: list[str], engine: str) -> Self:
        self.engine_name = engine
        env = engine_environment(engine, var_dir=self.var_dir, package_root=_PACKAGE_ROOT,
                                 wait_policy=self.options.wait_policy)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a") as log:
            self._process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                # A leased server is nobody's child: no pipe, signal or session ties it
                # to the process that happened to start it.
                stdin=subprocess.DEVNULL if self.lease else subprocess.PIPE,
                start_new_session=self.lease is not None,
            )
        try:
            deadline = time.monotonic() + self.startup_timeout
            self._address = self._read_address(deadline)
            self._wait_healthy(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _child_command(self, model_path: Path) -> list[str]:
        return [sys.executable, "-m", "embedded_judge.server", "--child",
                "--model-path", str(model_path), "--alias", self.model,
                *self.options.as_args()]

    def release(self) -> None:
        """Forget a leased server, which goes on without this process."""
        process, self._process, self._address = self._process, None, None
        if process is not None and process.stdout is not None:
            process.stdout.close()

    def stop(self, grace: float = 15.0) -> None:
        """Stop the server: close its stdin, then SIGTERM, then SIGKILL if it lingers."""
        process, self._process, self._address = self._process, None, None
        if process is None:
            return
        for ask in (_close_stdin, subprocess.Popen.terminate, subprocess.Popen.kill):
            ask(process)
            try:
                process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        if process.stdout is not None:
            process.stdout.close()

    def _read_address(self, deadline: float) -> str:
        process = self._running()
        assert process.stdout is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(self._failure(SERVER_NOT_READY))
            readable, _, _ = select.select([process.stdout], [], [], min(remaining, 1.0))
            if readable:
                line = process.stdout.readline()
                if line.startswith(READY_PREFIX):
                    return str(json.loads(line[len(READY_PREFIX):])["address"])
                if not line and process.poll() is not None:
                    raise RuntimeError(self._failure(SERVER_EXITED))
            elif process.poll() is not None:
                raise RuntimeError(self._failure(SERVER_EXITED))

    def _wait_healthy(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self._running().poll() is not None:
                raise RuntimeError(self._failure(SERVER_EXITED))
            if is_healthy(f"{self._address}/health"):
                return
            time.sleep(0.2)  # polling a server that is loading; nothing to wait on
        raise RuntimeError(self._failure(SERVER_NOT_READY))

    def _running(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise RuntimeError("the embedded judge is not running")
        return self._process

    def _failure(self, template: str) -> str:
        code = self._process.poll() if self._process is not None else None
        try:
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        except OSError:
            tail = "(no log)"
        return template.format(code=code, seconds=self.startup_timeout, log=self.log_path,
                               tail=tail)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: serve a packaged model (`--child` is the mode EmbeddedJudge uses)."""
    parser = argparse.ArgumentParser(description="Serve a packaged judge model over HTTP.")
    parser.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(MODELS))
    parser.add_argument("--var-dir", type=Path,
                        default=Path(os.environ.get("VAR_DIR", _PACKAGE_ROOT / "var")))
    parser.add_argument("--parallel", type=int, default=ServerOptions.n_parallel)
    parser.add_argument("--ctx-per-slot", type=int, default=ServerOptions.ctx_per_slot)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--host", default=ServerOptions.host)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--prompt-cache-mib", type=int, default=ServerOptions.prompt_cache_mib)
    parser.add_argument("--batch", type=int, default=ServerOptions.batch)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model-path", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--alias", help=argparse.SUPPRESS)
    add_lease_arguments(parser)
    args = parser.parse_args(argv)
    options = ServerOptions(n_parallel=args.parallel, ctx_per_slot=args.ctx_per_slot,
                            threads=args.threads, host=args.host, port=args.port,
                            prompt_cache_mib=args.prompt_cache_mib, batch=args.batch)
    if args.child:
        serve_child(args.model_path, alias=args.alias, options=options, lease=lease_of(args))
        return 0
    try:
        serve_forever(args.model, var_dir=args.var_dir, options=options)
    except ModelInstallError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _close_stdin(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()


if __name__ == "__main__":
    raise SystemExit(main())
