"""Fixtures of the grading tests that start processes of their own."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def stop_later() -> Iterator[list[subprocess.Popen[Any]]]:
    """Processes a test started, ended (by their own id) when it ends."""
    started: list[subprocess.Popen[Any]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)
