"""Reading settings from the environment: every knob is a variable with a safe default, and
``NAME_FILE`` may hold a secret's value (docs/deployment.md, "Settings")."""

from __future__ import annotations

import os
from pathlib import Path

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    """The variable's text: the file `NAME_FILE` names wins (a secret's place), else `NAME`."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        return Path(file_path).read_text(encoding="utf-8").strip()
    return os.environ.get(name)


def env_str(name: str, default: str = "") -> str:
    raw = _raw(name)
    return default if raw is None else raw


def yes_no(raw: str) -> bool:
    """`raw` read as a yes/no word (TRUE_WORDS or FALSE_WORDS, any case, spaces around
    ignored): the one reading of settings and query parameters. ValueError otherwise."""
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(raw)


def env_bool(name: str, default: bool = False) -> bool:
    raw = _raw(name)
    if raw is None:
        return default
    try:
        return yes_no(raw)
    except ValueError:
        raise ValueError(
            f"{name}={raw!r}: expected one of {sorted(TRUE_WORDS | FALSE_WORDS)}") from None


def env_int(name: str, default: int) -> int:
    raw = _raw(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected an integer") from None


def env_float(name: str, default: float) -> float:
    raw = _raw(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = _raw(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


_RATE_PERIODS = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}


def env_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate (N/second, N/minute, N/hour, N/day) or None for "off", checked at
    start: DRF itself would find a bad rate only at the first request."""
    raw = env_str(name, default).strip().lower()
    if raw == "off":
        return None
    count, _, period = raw.partition("/")
    if not (count.isdigit() and period in _RATE_PERIODS):
        raise ValueError(f"{name}={raw!r}: expected a rate such as 10/hour, or off")
    return raw
