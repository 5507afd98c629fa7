"""Fixtures for the pure measure tests: the toy campaign and trec_eval's reference
data, both under tests/data (its README names their sources)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scoring.measures.marked_run import MarkedBlock, read_marked_run

DATA = Path(__file__).resolve().parents[2] / "data"
EXAMPLES = DATA / "toy"
TREC_EVAL = DATA / "trec_eval"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    assert EXAMPLES.is_dir(), f"toy campaign not found at {EXAMPLES}"
    return EXAMPLES


@pytest.fixture(scope="session")
def trec_eval_dir() -> Path:
    assert TREC_EVAL.is_dir(), f"trec_eval reference data not found at {TREC_EVAL}"
    return TREC_EVAL


@pytest.fixture(scope="session")
def toy_marked_run(examples_dir: Path) -> list[MarkedBlock]:
    return read_marked_run(examples_dir / "WASEDA-AC-1.marked")
