"""Where the machine's embedded judge is written down, and who uses it: its record, start lock
and lease file under `<var_dir>/run/` (docs/judging.md, "One judge per machine")."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class SharedJudge:
    """A running embedded judge as its record names it."""

    model: str
    base_url: str
    slots: int
    pid: int
    started_by: int  # the pid of the process that started it (which may have exited)
    engine: str = ""  # which build of llama.cpp serves it (engines.py)
    threads: int = 0


def record_path(model: str, *, var_dir: Path) -> Path:
    """Where the machine's server of `model` is recorded."""
    return Path(var_dir) / "run" / f"embedded-judge-{model}.json"


def lease_path(record: Path) -> Path:
    """The file whose shared locks are the server's users."""
    return record.with_suffix(".lease")


def read_record(record: Path) -> SharedJudge | None:
    """The record's judge; None if there is none, or it is unreadable or from another
    version (as good as stale: it is replaced at the next start)."""
    try:
        return SharedJudge(**json.loads(record.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def write_record(record: Path, judge: SharedJudge) -> None:
    """Replace the record in one step: readers take no lock."""
    record.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=record.parent, prefix=f".{record.name}.",
                                     delete=False) as out:
        json.dump(asdict(judge), out)
    os.replace(out.name, record)


@contextlib.contextmanager
def start_lock(record: Path) -> Iterator[None]:
    """Held while a server is started or its record withdrawn: one at a time."""
    record.parent.mkdir(parents=True, exist_ok=True)
    with record.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def withdraw_record(record: Path, *, pid: int) -> None:
    """Remove the record if it still names the server `pid`."""
    with start_lock(record):
        current = read_record(record)
        if current is not None and current.pid == pid:
            record.unlink(missing_ok=True)
