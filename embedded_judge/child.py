"""The serving child: llama.cpp serves the model in this process until a signal, the end of
stdin or an unused lease stops it (docs/judging.md, "One judge per machine")."""

from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from embedded_judge.models import DEFAULT_MODEL, ensure_model
from embedded_judge.options import LEASE_CHECK_EVERY, READY_PREFIX, Lease, ServerOptions
from embedded_judge.records import withdraw_record


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


def serve_child(model_path: Path, *, alias: str, options: ServerOptions,
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
