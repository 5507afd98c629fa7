"""One embedded judge per machine: per VAR_DIR and packaged model, shared by every process.

A Celery worker runs several prefork children, and the `grade` command or `serve_llm`
may run beside it; each starting its own llama.cpp server would load the model once per
process and set the copies fighting over the same cores. So the first process that needs
the judge starts it and records it (records.py); every other process finds it there.

- A process that uses the judge holds a lease on it (a shared `flock`, records.py) from
  its first `shared_judge` until it exits, whichever way it exits; forked children
  share their parent's. The server belongs to none of them: it runs in a session of
  its own and stops once no process has held a lease for `idle_seconds` (server.py).
  So a `grade` command that found the server another command started goes on when that
  command ends, and one command after another reuse one loaded model.
- Starting is serialised by a lock beside the record: of two processes that find no
  live server at once, one starts it and the other waits for the lock, then finds it.
- A record is live when its server's pid exists and its `/v1/models` lists the model.
  Anything else (a server killed, a reboot, a pid reused by an unrelated process, a
  server that stopped answering) is stale and is replaced under the lock; a judge
  client that loses its server asks `shared_judge` again (grading/setup.py).

No Django imports here: the caller passes the var dir and the model.
"""

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

from grading.embedded.records import (
    SharedJudge,
    lease_path,
    read_record,
    record_path,
    start_lock,
    write_record,
)
from grading.embedded.server import EmbeddedJudge, Lease

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
    """The machine's server of `model`: the recorded one if it is live, else one started
    here (by `launch`, the packaged model on `engine` by default) and recorded for the
    others.

    This process holds a lease on it from now on (`hold_lease`). A server started here
    stops `idle_seconds` after the last process using it has gone.
    """
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
