"""One embedded judge per machine (per VAR_DIR and model), shared by every process through its
record and leases; no Django imports here (docs/judging.md, "One judge per machine")."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Protocol

from embedded_judge.options import Lease
from embedded_judge.records import (
    SharedJudge,
    lease_path,
    read_record,
    record_path,
    start_lock,
    write_record,
)
from embedded_judge.server import EmbeddedJudge

logger = logging.getLogger(__name__)

#: How long a shared server waits, unused, before it stops (GRADER_LOCAL_IDLE_SECONDS):
#: long enough for the next command of a script to find the model loaded.
IDLE_SECONDS = 600.0


class Launch(Protocol):
    """Makes the server of `model` (or, in tests, a stand-in); `shared_judge` starts it."""

    def __call__(self, model: str, var_dir: Path, lease: Lease,
                 engine: str | None) -> EmbeddedJudge: ...


def launch_packaged(model: str, var_dir: Path, lease: Lease,
                    engine: str | None) -> EmbeddedJudge:
    """The real thing: llama.cpp serving the packaged `model`, installed on first use,
    on `engine` (engines.py; None: the best installed)."""
    return EmbeddedJudge(model, var_dir=var_dir, lease=lease, engine=engine)


def find_judge(model: str, *, var_dir: Path) -> SharedJudge | None:
    """The live server of `model` recorded under `var_dir`, if there is one."""
    judge = read_record(record_path(model, var_dir=var_dir))
    return judge if judge is not None and is_serving(judge) else None


def shared_judge(model: str, *, var_dir: Path, launch: Launch | None = None,
                 idle_seconds: float = IDLE_SECONDS, engine: str | None = None) -> SharedJudge:
    """The machine's server of `model`: the recorded one if live, else one started here (by
    `launch`) and recorded; this process holds a lease on it from now on (`hold_lease`)."""
    record = record_path(model, var_dir=var_dir)
    hold_lease(record)
    found = find_judge(model, var_dir=var_dir)
    if found is not None:
        return found
    with start_lock(record):
        # Whoever held the lock before us may have started one meanwhile.
        found = find_judge(model, var_dir=var_dir)
        if found is not None:
            return found
        stale = read_record(record)
        if stale is not None:
            logger.warning("replacing the stale embedded judge record %s (pid %d, %s)",
                           record, stale.pid, stale.base_url)
        lease = Lease(record=record, idle_seconds=idle_seconds)
        server = (launch or launch_packaged)(model, Path(var_dir), lease, engine).start()
        judge = SharedJudge(model=model, base_url=server.base_url,
                            slots=server.options.n_parallel, pid=server.pid,
                            started_by=os.getpid(), engine=server.engine_name,
                            threads=server.options.threads or 0)
        write_record(record, judge)
        server.release()
        logger.info("started the embedded judge %s at %s (pid %d)", model, judge.base_url,
                    judge.pid)
        return judge


def hold_lease(record: Path) -> None:
    """Hold a lease on the server of `record` until this process exits (once per process;
    a forked child shares its parent's)."""
    with _leases_lock:
        if record in _leases:
            return
        record.parent.mkdir(parents=True, exist_ok=True)
        handle = lease_path(record).open("a")
        # Blocks only while an unused server withdraws its record (server.watch_lease).
        fcntl.flock(handle, fcntl.LOCK_SH)
        _leases[record] = handle


def stop_judge(model: str, *, var_dir: Path) -> SharedJudge | None:
    """Stop the machine's server of `model` now, whoever uses it (SIGTERM: it withdraws
    its record as it goes); the judge it was, or None if none was running."""
    judge = find_judge(model, var_dir=var_dir)
    if judge is not None:
        os.kill(judge.pid, signal.SIGTERM)
    return judge


def is_serving(judge: SharedJudge, timeout: float = 5.0) -> bool:
    """True when the judge's process exists and its `/v1/models` lists its model."""
    return _pid_exists(judge.pid) and judge.model in _served_models(judge.base_url, timeout)


_leases_lock = threading.Lock()
_leases: dict[Path, IO[str]] = {}


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    return True


def _served_models(base_url: str, timeout: float) -> set[str]:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:
            listed = json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return set()
    if not isinstance(listed, dict) or not isinstance(listed.get("data"), list):
        return set()
    return {str(item.get("id")) for item in listed["data"] if isinstance(item, dict)}


__all__ = ["Launch", "SharedJudge", "find_judge", "hold_lease", "is_serving",
           "launch_packaged", "record_path", "shared_judge", "stop_judge"]
