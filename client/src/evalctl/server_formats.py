"""The server's pure run-file parsers (submissions/formats), shipped in the client as
`evalctl.formats`, or read from the clone when run uninstalled (``PYTHONPATH=client/src``);
they run without numpy and sentencex."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from types import ModuleType

PACKAGE = "evalctl.formats"


class _CloneFormatsFinder(MetaPathFinder):
    """Finds `evalctl.formats` in the clone when it is not installed."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname != PACKAGE:
            return None
        clone = _in_clone()
        if clone is None:
            return None
        return spec_from_file_location(PACKAGE, clone / "__init__.py",
                                       submodule_search_locations=[str(clone)])


def _in_clone() -> Path | None:
    """submissions/formats of the clone this file is in (client/src/evalctl/), if it is."""
    parents = Path(__file__).resolve().parents
    if len(parents) < 4:
        return None
    folder = parents[3] / "submissions" / "formats"
    return folder if (folder / "__init__.py").is_file() else None


def formats_module(name: str) -> ModuleType:
    """The server's module `submissions.formats.<name>`, e.g. ``pr_run``."""
    if not any(isinstance(finder, _CloneFormatsFinder) for finder in sys.meta_path):
        # Last: an installed evalctl.formats is found first, by the usual finders.
        sys.meta_path.append(_CloneFormatsFinder())
    return importlib.import_module(f"{PACKAGE}.{name}")
