"""evalctl: a participant's client of the service's REST API: sign in, check a run file with
the server's own parsers and upload it, follow its grading, fetch shared PR runs, read scores."""

from __future__ import annotations

__version__ = "0.1.0"
