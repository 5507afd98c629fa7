"""Fixtures for the embedded judge tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def model_var_dir() -> Path:
    """Where packaged models are cached across runs: $VAR_DIR or the repo's var/."""
    return Path(os.environ.get("VAR_DIR") or REPO / "var")
