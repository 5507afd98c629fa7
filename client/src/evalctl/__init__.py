"""evalctl: a participant's client of the evaluation service's REST API (docs/api.md).

Sign in, check a run file with the server's own parsers and upload it, follow its
grading, fetch the shared PR runs and read the scores. One dependency: httpx2.
"""

from __future__ import annotations

__version__ = "0.1.0"
