"""Run a packaged model as a llama.cpp OpenAI-compatible HTTP server with `xllamacpp`, in a child
process: one caller's, or the machine's shared judge (docs/judging.md, "The engine")."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Self, TextIO

from embedded_judge.engines import NATIVE, PREBUILT, chosen_engine, engine_environment
from embedded_judge.models import DEFAULT_MODEL, MODELS, ModelInstallError, ensure_model
from embedded_judge.records import lease_path, withdraw_record

logger = logging.getLogger(__name__)

READY_PREFIX = "EMBEDDED-JUDGE-READY "
SERVER_EXITED = "the embedded judge exited with code {code} while starting; log {log}:\n{tail}"
SERVER_NOT_READY = "the embedded judge did not become ready in {seconds:.0f} s; log {log}:\n{tail}"

# The package root, so the child can import `grading` whatever its working directory.
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ServerOptions:
    """How to run the server: `n_parallel` slots of `ctx_per_slot` tokens of context each;
    `threads` None uses every core, `port` 0 lets the OS pick a free one."""

    n_parallel: int = 4
    ctx_per_slot: int = 4096
    threads: int | None = None
    host: str = "127.0.0.1"
    port: int = 0
    prompt_cache_mib: int = 1024
    # How llama.cpp's OpenMP threads wait for each other: "PASSIVE" sleeps, so a core
    # another process needs is free at once; None is OpenMP's default (they spin first).
    wait_policy: str | None = "PASSIVE"
    # Tokens computed per step (llama.cpp's batch and micro-batch). Its /metrics counters
    # move once a step, and the judge client waits while they move: a step must end well
    # within GRADER_TIMEOUT even on a loaded machine (512 tokens of the 1.5B model at 10
    # tokens/s take 51 s). None: llama.cpp's own, up to 2048 tokens a step.
    batch: int | None = 512

    def as_args(self) -> list[str]:
        """The same options as command-line arguments of this module."""
        args = ["--parallel", str(self.n_parallel), "--ctx-per-slot", str(self.ctx_per_slot),
                "--host", self.host, "--port", str(self.port),
                "--prompt-cache-mib", str(self.prompt_cache_mib)]
        if self.threads is not None:
            args += ["--threads", str(self.threads)]
        if self.batch is not None:
            args += ["--batch", str(self.batch)]
        return args


def server_log_path(var_dir: Path) -> Path:
    """Where an embedded judge under `var_dir` logs, unless told otherwise."""
    return Path(var_dir) / "logs" / "embedded-judge.log"


@dataclass(frozen=True)
class Lease:
    """What keeps a shared server alive: shared locks on the lease file beside `record`; once none
    is held for `idle_seconds`, the server withdraws `record` (if still its own) and exits."""

    record: Path
    idle_seconds: float

    @property
    def path(self) -> Path:
        return lease_path(self.record)

    def as_args(self) -> list[str]:
        return ["--record", str(self.record), "--idle-seconds", str(self.idle_seconds)]


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


def is_healthy(url: str, timeout: float = 2.0) -> bool:
    """True when GET `url` answers 200 (llama.cpp answers 503 while loading)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def run_server(
    model_path: Path,
    *,
    alias: str,
    options: ServerOptions,
    on_ready: Callable[[str], None],
    stop: threading.Event,
) -> None:
    """Serve `model_path` in this process until `stop` is set (blocks); `on_ready` gets the address
    ("http://127.0.0.1:PORT") once the model is loaded and the server accepts requests."""
    # The native library is loaded only in the process that serves (and it ships no
    # type hints, hence Any).
    xllamacpp: Any = importlib.import_module("xllamacpp")
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {alias}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_parallel = options.n_parallel
    params.n_ctx = options.n_parallel * options.ctx_per_slot
    params.cache_ram_mib = options.prompt_cache_mib
    params.ui = False
    params.endpoint_metrics = True  # the client reads progress off its counters
    if options.batch is not None:
        params.n_batch = params.n_ubatch = options.batch
    if options.threads is not None:
        params.cpuparams.n_threads = options.threads
        params.cpuparams_batch.n_threads = options.threads
    server = xllamacpp.Server(params)
    try:
        # The engine's task loop starts after the constructor returns, and a stop sent
        # before it runs is lost (the loop sets itself running), so the destructor would
        # wait forever. A metrics request is answered by that loop: once it returns,
        # stopping is safe.
        server.handle_metrics()
        on_ready(str(server.listening_address))
        while not stop.wait(timeout=1.0):
            pass
    finally:
        del server  # the destructor stops the HTTP threads and frees the model


def serve_forever(model: str = DEFAULT_MODEL, *, var_dir: Path,
                  options: ServerOptions | None = None) -> None:
    """Install `model` if needed and serve it in the foreground until SIGINT/SIGTERM."""
    options = options or ServerOptions()
    model_path = ensure_model(model, var_dir=var_dir)
    stop = stop_on_signals()

    def announce(address: str) -> None:
        print(f"serving {model} at {address}/v1 with {options.n_parallel} parallel slots "
              f"(Ctrl-C stops)", flush=True)

    run_server(model_path, alias=model, options=options, on_ready=announce, stop=stop)


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
        _child(args.model_path, alias=args.alias, options=options, lease=lease_of(args))
        return 0
    try:
        serve_forever(args.model, var_dir=args.var_dir, options=options)
    except ModelInstallError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _child(model_path: Path, *, alias: str, options: ServerOptions,
           lease: Lease | None) -> None:
    life = ChildLife(lease)
    try:
        run_server(model_path, alias=alias, options=options, on_ready=life.announce,
                   stop=life.stop)
    finally:
        life.end()


class ChildLife:
    """How a server child lives: stdout to the log but the ready line, `stop` set by SIGINT/SIGTERM
    and by stdin's end (no lease) or the lease falling unused; `end` withdraws a leased record."""

    def __init__(self, lease: Lease | None) -> None:
        self.lease = lease
        self._ready_pipe = os.dup(1)
        os.dup2(2, 1)
        self.stop = stop_on_signals()
        if lease is None:
            threading.Thread(target=_watch_stdin, args=(self.stop,), name="watch-parent",
                             daemon=True).start()

    def announce(self, address: str) -> None:
        """Tell the parent where the server listens (once), and start living on."""
        os.write(self._ready_pipe,
                 (READY_PREFIX + json.dumps({"address": address}) + "\n").encode())
        os.close(self._ready_pipe)
        if self.lease is not None:
            threading.Thread(target=watch_lease, args=(self.lease, self.stop),
                             name="watch-lease", daemon=True).start()

    def end(self) -> None:
        if self.lease is not None:
            withdraw_record(self.lease.record, pid=os.getpid())


def _watch_stdin(stop: threading.Event) -> None:
    # EOF on stdin: the parent closed it or died. Either way, stop serving.
    while sys.stdin.readline():
        pass
    stop.set()


#: How often a leased server looks for its users.
LEASE_CHECK_EVERY = 0.5


def watch_lease(lease: Lease, stop: threading.Event) -> None:
    """Set `stop` once no process has held `lease` for its `idle_seconds`; withdraw the
    record first, while holding the lease alone, so a newcomer that was waiting for a
    hold finds no record and starts the next server instead of using this one."""
    unused_since: float | None = None
    with lease.path.open("a") as handle:
        while not stop.wait(LEASE_CHECK_EVERY):
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # someone uses it
                unused_since = None
                continue
            try:
                now = time.monotonic()
                unused_since = now if unused_since is None else unused_since
                if now - unused_since >= lease.idle_seconds:
                    withdraw_record(lease.record, pid=os.getpid())
                    stop.set()
                    return
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def add_lease_arguments(parser: argparse.ArgumentParser) -> None:
    """The child's `--record` and `--idle-seconds` (a `Lease` once parsed)."""
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--idle-seconds", type=float, default=0.0, help=argparse.SUPPRESS)


def lease_of(args: argparse.Namespace) -> Lease | None:
    if args.record is None:
        return None
    return Lease(record=args.record, idle_seconds=args.idle_seconds)


def stop_on_signals() -> threading.Event:
    """An event set by SIGINT or SIGTERM: how a foreground server learns to stop."""
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handle)
    return stop


def _close_stdin(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()


if __name__ == "__main__":
    raise SystemExit(main())
