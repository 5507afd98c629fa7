"""`evalctl status`: your runs and where they are, waiting if asked until none is received,
queued or grading; a valid AC run waits for the organisers to start grading."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from evalctl.api import Api, ClientError, campaign_path
from evalctl.config import signed_in_api
from evalctl.terminal import EXIT_OK, EXIT_STILL_PENDING, print_table, say, when

#: Run statuses that have not settled yet (submissions.models.RunStatus): `status --wait`
#: waits until no current run is in one.
PENDING = ("received", "queued", "grading")
#: Track kinds whose runs are graded: valid there means accepted, waiting for the organisers.
GRADED_KINDS = ("ac", "ranking", "response")
AWAITING_ORGANISERS = ("{runs}: valid, and graded once the organisers start grading; "
                       "--wait waits only while a run is received, queued or grading")
WAIT_SECONDS = 3600.0
POLL_SECONDS = 5.0
MIN_POLL_SECONDS = 0.2
NO_CAMPAIGNS = "you take part in no campaign on {site}"


def status_command(args: argparse.Namespace) -> int:
    api = signed_in_api()
    try:
        slugs = [args.campaign] if args.campaign else _own_campaigns(api)
        interval = max(args.interval, MIN_POLL_SECONDS)
        deadline = time.monotonic() + args.timeout
        waiting_for = ""
        while True:
            listing = {slug: shown_runs(api.get(campaign_path(slug) + "/runs/")) for slug in slugs}
            pending = [f"{run['name']} ({run['status']})" for runs in listing.values()
                       for run in runs if run["is_current"] and run["status"] in PENDING]
            if not args.wait or not pending or time.monotonic() >= deadline:
                break
            if ", ".join(pending) != waiting_for:
                waiting_for = ", ".join(pending)
                say(f"waiting for {waiting_for}")
            time.sleep(interval)
    finally:
        api.close()
    if args.json:
        print(json.dumps(listing, indent=2))
    else:
        _print_runs(listing)
    if args.wait and not pending:
        accepted = [run["name"] for runs in listing.values() for run in runs
                    if run["is_current"] and _awaits_organisers(run)]
        if accepted:
            say(AWAITING_ORGANISERS.format(runs=", ".join(accepted)))
    if args.wait and pending:
        raise ClientError(f"still not settled after {args.timeout:g} s: {', '.join(pending)}",
                          exit_code=EXIT_STILL_PENDING)
    return EXIT_OK


def _own_campaigns(api: Api) -> list[str]:
    slugs = [c["slug"] for c in api.get("/campaigns/") if c.get("role")]
    if not slugs:
        raise ClientError(NO_CAMPAIGNS.format(site=api.site))
    return slugs


def shown_runs(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The runs a participant looks for: every current version, and an invalid upload
    that is the newest of its name (the server lists by name, newest first)."""
    shown: list[dict[str, Any]] = []
    newest_seen: set[str] = set()
    for run in runs:
        newest = run["name"] not in newest_seen
        newest_seen.add(run["name"])
        if run["is_current"] or (newest and run["status"] == "invalid"):
            shown.append(dict(run))
    return shown


def _print_runs(listing: Mapping[str, list[dict[str, Any]]]) -> None:
    for slug, runs in listing.items():
        print(f"{slug}:")
        if not runs:
            print("  no runs yet")
            continue
        rows = [[run["name"], run["team"], run["track"], run["status"],
                 when(run["created_at"]), _note(run)] for run in runs]
        print_table(["RUN", "TEAM", "TRACK", "STATUS", "UPLOADED", "NOTE"], rows, indent=2)


def _awaits_organisers(run: Mapping[str, Any]) -> bool:
    return run["status"] == "valid" and run.get("kind") in GRADED_KINDS


def _note(run: Mapping[str, Any]) -> str:
    if run["status"] == "invalid":
        return f"{len(run['validation_report'])} problem(s): see the run page or the API"
    if _awaits_organisers(run):
        return "graded once the organisers start grading"
    return str(run.get("failure_reason") or "")
