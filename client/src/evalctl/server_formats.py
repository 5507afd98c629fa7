"""The service's own run-file parsers, as the client runs them.

client/pyproject.toml ships the server's pure package `submissions/formats` (it imports
nothing from Django or the apps) inside the client as
`evalctl.formats`, so the check before an upload is the server's, rule for rule and
message for message. The package needs neither of the server's libraries the client
does not install: numpy only speeds up a screen it does without, and sentencex is
imported only to cut responses into passages, which the server does after an upload.
The client's tests run it where neither is installed.

Run from a clone without installing (``PYTHONPATH=client/src``), `evalctl.formats` is
read where it lives, two folders up from client/src.
"""

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
