"""What the embedded judge's parent and its serving child share: the server's options, the
lease that keeps a shared server alive, the ready line and the health check."""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from embedded_judge.records import lease_path

READY_PREFIX = "EMBEDDED-JUDGE-READY "


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


def is_healthy(url: str, timeout: float = 2.0) -> bool:
    """True when GET `url` answers 200 (llama.cpp answers 503 while loading)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


#: How often a leased server looks for its users.
LEASE_CHECK_EVERY = 0.5
