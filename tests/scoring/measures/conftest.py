"""Fixtures for the pure measure tests: the shared example campaign and trec_eval's
reference data, which live in shared/ beside the repository (DESIGN.md section 4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.scoring.measures.marked_run import MarkedBlock, read_marked_run

SHARED = Path(os.environ.get("SHARED_DIR", Path(__file__).resolve().parents[4] / "shared"))
EXAMPLES = SHARED / "examples"
TREC_EVAL = SHARED / "reference" / "trec_eval"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    assert EXAMPLES.is_dir(), f"shared examples not found at {EXAMPLES} (set SHARED_DIR)"
    return EXAMPLES


@pytest.fixture(scope="session")
def trec_eval_dir() -> Path:
    assert TREC_EVAL.is_dir(), f"trec_eval reference data not found at {TREC_EVAL}"
    return TREC_EVAL


@pytest.fixture(scope="session")
def toy_marked_run(examples_dir: Path) -> list[MarkedBlock]:
    return read_marked_run(examples_dir / "WASEDA-AC-1.marked")
