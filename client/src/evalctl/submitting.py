"""`evalctl submit`: the run file checked here, and the track's deadline by the site's clock,
before anything is sent; then the upload and the server's report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from evalctl.api import Api, ApiError, ClientError, campaign_path, problem_line
from evalctl.checks import check_run_file
from evalctl.config import signed_in_api
from evalctl.progress import ProgressBar
from evalctl.server_formats import formats_module
from evalctl.terminal import EXIT_OK, say

NO_SUCH_TRACK = "campaign {campaign} has no track {track!r}; expected one of: {tracks}"
CHECK_FOUND = "{path}: {count} problem(s) found before upload; nothing was sent"
CHECK_PASSED = "{path}: the format check found no problem"
NO_CHECK_FOR_KIND = "{path}: no format check for {kind} runs here; the server checks it"
NOTHING_SENT = "checked before the upload, by the site's clock: nothing was sent"


def submit_command(args: argparse.Namespace) -> int:
    path: Path = args.file
    if not path.is_file():
        raise ClientError(f"no such file: {path}")
    name = args.name or path.name
    api = signed_in_api()
    try:
        campaign, now = _campaign_and_clock(api, args.campaign, needed=not args.no_check)
        if campaign is not None:
            _check_window(campaign, args.track, now)
        if campaign is not None and not args.no_check:
            _check_before_upload(api, args.campaign, campaign, args.track, path)
        bar = ProgressBar(f"uploading {name}", path.stat().st_size, sys.stderr)
        try:
            with path.open("rb") as file:
                run = api.upload_run(args.campaign, track=args.track, name=name,
                                     description=args.description, file=file,
                                     filename=path.name, progress=bar)
        finally:
            bar.finish()
    except OSError as error:
        raise ClientError(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        api.close()
    print(f"{run['name']} accepted ({run['status']}): {run['records']} record(s) for "
          f"{run['questions']} question(s), run id {run['id']}, sha256 {run['sha256']}")
    return EXIT_OK


def _campaign_and_clock(api: Api, slug: str, *,
                        needed: bool) -> tuple[Mapping[str, Any] | None, datetime | None]:
    """The campaign as the API shows it, and the site's clock then. Unless `needed` (the
    format check needs it), a failure is left to the upload, which the server answers."""
    try:
        campaign, now = api.get_dated(campaign_path(slug) + "/")
    except ClientError:
        if needed:
            raise
        return None, None
    return (campaign if isinstance(campaign, Mapping) else None), now


def _check_window(campaign: Mapping[str, Any], track_slug: str, now: datetime | None) -> None:
    """ClientError in the server's words when the track takes no participant's run now
    (not open yet, or closed), by the site's clock: nothing is sent. Whatever is missing
    (no clock, a field, the zone) leaves it to the server; organisers may upload any time."""
    track = next((t for t in campaign.get("tracks") or [] if t.get("slug") == track_slug), None)
    if now is None or track is None or campaign.get("role") != "participant":
        return
    try:
        refusal = formats_module("upload_window").window_refusal(
            track=track_slug, opens=datetime.fromisoformat(campaign["phases"]["topics_release"]),
            due=datetime.fromisoformat(track["due"]), now=now, zone=campaign["timezone"])
    except (ImportError, KeyError, TypeError, ValueError):  # ZoneInfoNotFoundError: KeyError
        return
    if refusal is not None:
        raise ClientError(refusal, [NOTHING_SENT])


def _check_before_upload(api: Api, slug: str, campaign: Mapping[str, Any], track_slug: str,
                         path: Path) -> None:
    """The server's format check of the track's kind, or ClientError listing every
    problem in the server's words; nothing is sent when there is one."""
    kinds = {track["slug"]: track["kind"] for track in campaign["tracks"]}
    if track_slug not in kinds:
        raise ClientError(NO_SUCH_TRACK.format(campaign=slug, track=track_slug,
                                               tracks=", ".join(kinds)))
    kind = kinds[track_slug]
    problems = check_run_file(path, kind=kind, known_qids=_known_qids(api, slug))
    if problems is None:
        say(NO_CHECK_FOR_KIND.format(path=path, kind=kind))
    elif problems:
        raise ClientError(CHECK_FOUND.format(path=path, count=len(problems)),
                          [problem_line(problem.as_json()) for problem in problems])
    else:
        say(CHECK_PASSED.format(path=path))


def _known_qids(api: Api, slug: str) -> set[str] | None:
    """The campaign's question ids, or None before they are released to you (then the
    upload is refused anyway, with the date)."""
    try:
        questions = api.get(campaign_path(slug) + "/questions/")
    except ApiError as error:
        if error.status == 404:
            return None
        raise
    return {str(question["qid"]) for question in questions}
