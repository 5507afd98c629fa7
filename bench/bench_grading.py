"""Benchmark: grading >= 5,000 nugget records through the R2C2 judge pipeline.

The entry point of the package bench/grading_bench/, whose docstring says what is
measured and how. Run: .venv/bin/python bench/bench_grading.py --help
"""

from __future__ import annotations

import sys
from pathlib import Path

# The repository's apps and tests (the scripted judge server); bench/ itself, where the
# package lives, is on the path as this script's folder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grading_bench.cli import main

if __name__ == "__main__":
    main()
