"""The check of a run file before it is sent, with the server's own parsers: what only the
server knows (shared PR runs, the corpus, names, quotas) is left to it (docs/deployment.md,
"The participants' client")."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalctl.api import ClientError
from evalctl.server_formats import formats_module

#: As many problems as the server lists in a validation report (submissions.services).
MAX_REPORTED_PROBLEMS = 1000
MORE_PROBLEMS = "and {count} more problem(s) of the same kinds, not listed"
NOT_INSTALLED = (
    "this evalctl has no run-file parsers ({reason}); install it with `pip install ./client` "
    "from a clone of the service's repository, or upload with --no-check"
)


@dataclass(frozen=True)
class Problem:
    """One problem of a file, as the server reports it: ``{line, field, message}``."""

    line: int
    field: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}


def _pr(file: Any, known_qids: Collection[str] | None) -> list[Any]:
    problems: list[Any] = formats_module("pr_run").validate_pr_run(file, known_qids=known_qids)
    return problems


def _ac(file: Any, known_qids: Collection[str] | None) -> list[Any]:
    # No shared_pr_runs: the PR runs an AC run may cite, and their ranks, are the server's.
    parsed = formats_module("ac_run").parse_ac_run(file, known_qids=known_qids)
    return list(parsed.problems)


def _ranking(file: Any, known_qids: Collection[str] | None) -> list[Any]:
    # No missing_docids: the corpus is the server's.
    parsed = formats_module("trec_run").parse_trec_run(file, known_qids=known_qids)
    return list(parsed.problems)


def _response(file: Any, known_qids: Collection[str] | None) -> list[Any]:
    parsed = formats_module("response_run").parse_response_run(file, known_qids=known_qids)
    return list(parsed.problems)


#: The parser of each track kind (campaign.models.TrackKind).
CHECKS = {"pr": _pr, "ac": _ac, "ranking": _ranking, "response": _response}


def check_run_file(path: Path, *, kind: str,
                   known_qids: Collection[str] | None) -> list[Problem] | None:
    """Every problem the server's parser finds in the file, in its words and escaped as the
    server stores them, at most `MAX_REPORTED_PROBLEMS`; None for a kind it does not know."""
    check = CHECKS.get(kind)
    if check is None:
        return None
    try:
        visible = formats_module("control_characters").visible
        with path.open("rb") as file:
            found = check(file, known_qids)
    except ImportError as error:
        raise ClientError(NOT_INSTALLED.format(reason=error)) from None
    problems = [Problem(p.line, p.field, visible(p.message))
                for p in found[:MAX_REPORTED_PROBLEMS]]
    if len(found) > MAX_REPORTED_PROBLEMS:
        problems.append(Problem(0, "file", MORE_PROBLEMS.format(
            count=len(found) - MAX_REPORTED_PROBLEMS)))
    return problems
