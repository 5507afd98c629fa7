"""Benchmark: grading RUBRIC ranking runs over a shared passage pool.

The entry point of the package bench/rubric_bench/, whose docstring says what is
measured and how. Run: .venv/bin/python bench/bench_rubric.py --help
"""

from __future__ import annotations

import sys
from pathlib import Path

# The repository's apps and tests (the scripted judge server); bench/ itself, where the
# packages live, is on the path as this script's folder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rubric_bench.cli import main

if __name__ == "__main__":
    main()
