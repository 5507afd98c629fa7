"""Reading settings from the environment: every knob is a variable with a safe default, and
``NAME_FILE`` may hold a secret's value (docs/deployment.md, "Settings")."""

from __future__ import annotations

import os
from pathlib import Path

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    """The variable's value; `NAME_FILE` (a path) wins, so secrets can come from files."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        return Path(file_path).read_text(encoding="utf-8").strip()
    return os.environ.get(name, default)


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
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return yes_no(raw)
    except ValueError:
        raise ValueError(
            f"{name}={raw!r}: expected one of {sorted(TRUE_WORDS | FALSE_WORDS)}") from None


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected an integer") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]
