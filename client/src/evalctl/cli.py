"""The `evalctl` command: login, submit, status, download-shared, scores. A refusal or an
unreachable site is printed as the server said it, with a non-zero exit status, never a
traceback (docs/deployment.md, "The participants' client")."""

from __future__ import annotations

import argparse
import getpass
import json
import shutil
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evalctl import __version__
from evalctl.api import Api, ApiError, ClientError, problem_line, site_url
from evalctl.checks import check_run_file
from evalctl.config import Credentials, credentials, save
from evalctl.progress import ProgressBar
from evalctl.server_formats import formats_module

EXIT_OK = 0
EXIT_ERROR = 1  # the server or the check refused, or the site could not be reached
EXIT_USAGE = 2  # argparse's own
EXIT_STILL_PENDING = 3  # status --wait ran out of time
EXIT_INTERRUPTED = 130

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

EPILOG = f"""\
exit status: {EXIT_OK} done; {EXIT_ERROR} refused (by the check or the server), or the site
could not be reached; {EXIT_USAGE} a bad command line; {EXIT_STILL_PENDING} `status --wait` \
ran out of time.

The site and token come from `evalctl login`, kept in ~/.config/evalctl/config.json
(readable by you only), or from EVALCTL_SITE and EVALCTL_TOKEN."""

NO_SUCH_TRACK = "campaign {campaign} has no track {track!r}; expected one of: {tracks}"
CHECK_FOUND = "{path}: {count} problem(s) found before upload; nothing was sent"
CHECK_PASSED = "{path}: the format check found no problem"
NO_CHECK_FOR_KIND = "{path}: no format check for {kind} runs here; the server checks it"
NOTHING_SENT = "checked before the upload, by the site's clock: nothing was sent"
NO_CAMPAIGNS = "you take part in no campaign on {site}"
NO_SUCH_RUN = "no current run {name} of yours in {campaign}"
NO_LEADERBOARD = "no leaderboard of {campaign} is published yet"


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except ClientError as error:
        _say(f"error: {error.message}")
        for line in error.details:
            _say(f"  {line}")
        return error.exit_code
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="evalctl", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Submit runs to an evaluation campaign, follow their grading, read "
                    "the scores.")
    top.add_argument("--version", action="version", version=f"evalctl {__version__}")
    commands = top.add_subparsers(title="commands", required=True, metavar="COMMAND")

    login = commands.add_parser("login", help="sign in and keep the site and token")
    login.add_argument("--site", help="the service's address, e.g. https://eval.example.org "
                                      "(default: the one kept, or EVALCTL_SITE)")
    login.add_argument("--username", help="your user name (asked for if missing)")
    how = login.add_mutually_exclusive_group()
    how.add_argument("--password-stdin", action="store_true",
                     help="read the password from standard input (scripts)")
    how.add_argument("--token", help="keep this API token instead of signing in")
    login.set_defaults(command=login_command)

    submit = commands.add_parser("submit", help="check a run file, upload it, show the report")
    submit.add_argument("campaign", metavar="CAMPAIGN", help="the campaign's slug")
    submit.add_argument("track", metavar="TRACK", help="the track's slug, e.g. pr or ac")
    submit.add_argument("file", metavar="FILE", type=Path, help="the run file")
    submit.add_argument("--name", help="the run name (default: the file's name), e.g. "
                                       "WASEDA-AC-1")
    submit.add_argument("--description", default="", help="how the run was made")
    submit.add_argument("--no-check", action="store_true",
                        help="skip the format check here; the server checks anyway")
    submit.set_defaults(command=submit_command)

    status = commands.add_parser("status", help="your runs and where they are")
    status.add_argument("campaign", metavar="CAMPAIGN", nargs="?",
                        help="one campaign (default: every campaign you take part in)")
    status.add_argument("--wait", action="store_true",
                        help="wait until no run is received, queued or grading")
    status.add_argument("--timeout", type=float, default=WAIT_SECONDS,
                        help=f"give up waiting after this many seconds ({WAIT_SECONDS:.0f})")
    status.add_argument("--interval", type=float, default=POLL_SECONDS,
                        help=f"seconds between two looks ({POLL_SECONDS:.0f})")
    status.add_argument("--json", action="store_true", help="print the runs as JSON")
    status.set_defaults(command=status_command)

    shared = commands.add_parser("download-shared",
                                 help="the PR runs shared with every team (after the PR "
                                      "deadline)")
    shared.add_argument("campaign", metavar="CAMPAIGN")
    shared.add_argument("-o", "--output", type=Path,
                        help="the folder to put them in (default: CAMPAIGN-shared-pr-runs)")
    shared.set_defaults(command=download_shared_command)

    scores = commands.add_parser("scores", help="published leaderboards, or one run's scores")
    scores.add_argument("campaign", metavar="CAMPAIGN")
    scores.add_argument("--run", metavar="NAME", help="your run's scores, per question")
    scores.add_argument("--track", help="only this track's leaderboard")
    scores.add_argument("--json", action="store_true", help="print the server's JSON")
    scores.set_defaults(command=scores_command)
    return top


# --- login -----------------------------------------------------------------------------


def login_command(args: argparse.Namespace) -> int:
    site = site_url(args.site) if args.site else credentials(need_token=False).site
    username = args.username
    if args.token:
        token = args.token
    else:
        username = username or _ask("username: ")
        password = _read_password() if args.password_stdin else getpass.getpass("password: ")
        answer = _call(Api(site, None), lambda api: api.post(
            "/auth/token/", {"username": username, "password": password}))
        token = str(answer["token"])
    # Also the proof that a token given with --token is good: a bad one is a 401.
    campaigns = _call(Api(site, token), lambda api: api.get("/campaigns/"))
    path = save(Credentials(site=site, token=token))
    who = f" as {username}" if username else ""
    print(f"signed in to {site}{who}; the token is kept in {path} (readable by you only)")
    for campaign in campaigns:
        if campaign.get("role"):
            team = f", team {campaign['team']}" if campaign.get("team") else ""
            print(f"  {campaign['slug']}: {campaign['role']}{team} ({campaign['title']})")
    return EXIT_OK


def _ask(prompt: str) -> str:
    try:
        answer = input(prompt).strip()
    except EOFError:
        answer = ""
    if not answer:
        raise ClientError("no user name: give --username")
    return answer


def _read_password() -> str:
    password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise ClientError("no password on standard input")
    return password


# --- submit ----------------------------------------------------------------------------


def submit_command(args: argparse.Namespace) -> int:
    path: Path = args.file
    if not path.is_file():
        raise ClientError(f"no such file: {path}")
    name = args.name or path.name
    api = _api()
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
        campaign, now = api.get_dated(_campaign(slug) + "/")
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
        _say(NO_CHECK_FOR_KIND.format(path=path, kind=kind))
    elif problems:
        raise ClientError(CHECK_FOUND.format(path=path, count=len(problems)),
                          [problem_line(problem.as_json()) for problem in problems])
    else:
        _say(CHECK_PASSED.format(path=path))


def _known_qids(api: Api, slug: str) -> set[str] | None:
    """The campaign's question ids, or None before they are released to you (then the
    upload is refused anyway, with the date)."""
    try:
        questions = api.get(_campaign(slug) + "/questions/")
    except ApiError as error:
        if error.status == 404:
            return None
        raise
    return {str(question["qid"]) for question in questions}


# --- status ----------------------------------------------------------------------------


def status_command(args: argparse.Namespace) -> int:
    api = _api()
    try:
        slugs = [args.campaign] if args.campaign else _own_campaigns(api)
        interval = max(args.interval, MIN_POLL_SECONDS)
        deadline = time.monotonic() + args.timeout
        waiting_for = ""
        while True:
            listing = {slug: shown_runs(api.get(_campaign(slug) + "/runs/")) for slug in slugs}
            pending = [f"{run['name']} ({run['status']})" for runs in listing.values()
                       for run in runs if run["is_current"] and run["status"] in PENDING]
            if not args.wait or not pending or time.monotonic() >= deadline:
                break
            if ", ".join(pending) != waiting_for:
                waiting_for = ", ".join(pending)
                _say(f"waiting for {waiting_for}")
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
            _say(AWAITING_ORGANISERS.format(runs=", ".join(accepted)))
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
                 _when(run["created_at"]), _note(run)] for run in runs]
        _print_table(["RUN", "TEAM", "TRACK", "STATUS", "UPLOADED", "NOTE"], rows, indent=2)


def _awaits_organisers(run: Mapping[str, Any]) -> bool:
    return run["status"] == "valid" and run.get("kind") in GRADED_KINDS


def _note(run: Mapping[str, Any]) -> str:
    if run["status"] == "invalid":
        return f"{len(run['validation_report'])} problem(s): see the run page or the API"
    if _awaits_organisers(run):
        return "graded once the organisers start grading"
    return str(run.get("failure_reason") or "")


# --- download-shared -------------------------------------------------------------------


def download_shared_command(args: argparse.Namespace) -> int:
    slug = args.campaign
    folder: Path = args.output or Path(f"{slug}-shared-pr-runs")
    api = _api()
    try:
        with tempfile.TemporaryFile() as bundle:
            api.download(_campaign(slug) + "/shared-pr-runs.zip", bundle)
            bundle.seek(0)
            names = _unpack(bundle, folder)
    except OSError as error:
        raise ClientError(f"cannot write to {folder}: {error.strerror or error}") from None
    finally:
        api.close()
    print(f"{len(names)} shared PR run(s) of {slug} in {folder}: {', '.join(names) or 'none'}")
    return EXIT_OK


def _unpack(bundle: Any, folder: Path) -> list[str]:
    """The zip's run files, each written as `folder`/its run name."""
    try:
        archive = zipfile.ZipFile(bundle)
    except zipfile.BadZipFile:
        raise ClientError("the server's answer is not a zip file") from None
    folder.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    with archive:
        for member in archive.infolist():
            # Members are named by run name; anything with a path in it is not a run.
            if member.is_dir() or Path(member.filename).name != member.filename \
                    or member.filename.startswith("."):
                _say(f"skipped {member.filename!r}: not a run name")
                continue
            with archive.open(member) as source, (folder / member.filename).open("wb") as out:
                shutil.copyfileobj(source, out)
            names.append(member.filename)
    return names


# --- scores ----------------------------------------------------------------------------


def scores_command(args: argparse.Namespace) -> int:
    api = _api(need_token=args.run is not None)
    try:
        if args.run:
            return _run_scores(api, args.campaign, args.run, as_json=args.json)
        return _leaderboards(api, args.campaign, track=args.track, as_json=args.json)
    finally:
        api.close()


def _leaderboards(api: Api, slug: str, *, track: str | None, as_json: bool) -> int:
    team = api.get(_campaign(slug) + "/").get("team")
    boards = [board for board in api.get(_campaign(slug) + "/leaderboards/")["leaderboards"]
              if track is None or board["track"] == track]
    if as_json:
        print(json.dumps(boards, indent=2))
        return EXIT_OK
    if not boards:
        print(NO_LEADERBOARD.format(campaign=slug))
        return EXIT_OK
    for board in boards:
        stale = " (stale: computed before the latest judgment edit)" if board.get("stale") else ""
        print(f"{slug} / {board['track']} ({board['kind']}): judge {board['judge']}, "
              f"computed {_when(board['computed_at'])}, {board['questions']} question(s){stale}")
        measures = _measures(board["rows"])
        rows = [[str(rank), ("* " if row.get("team") == team else "  ") + row["run"],
                 row.get("team") or "", *(_number(row.get(m)) for m in measures)]
                for rank, row in enumerate(board["rows"], start=1)]
        _print_table(["#", "  RUN", "TEAM", *measures], rows, indent=2)
    if team:
        print(f"* your team ({team})")
    return EXIT_OK


def _measures(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The score columns of a leaderboard's rows, in the server's order."""
    named = ("run", "run_id", "team", "incomplete_questions")
    measures: list[str] = []
    for row in rows:
        measures += [key for key in row if key not in named and key not in measures]
    return measures


def _run_scores(api: Api, slug: str, name: str, *, as_json: bool) -> int:
    runs = api.get(_campaign(slug) + "/runs/", params={"current": "true"})
    run = next((r for r in runs if r["name"] == name), None)
    if run is None:
        raise ClientError(NO_SUCH_RUN.format(name=name, campaign=slug))
    scores = api.get(f"/runs/{run['id']}/scores/")
    if as_json:
        print(json.dumps(scores, indent=2))
        return EXIT_OK
    print(f"{name} ({run['track']}): evaluation {scores['evaluation']}, "
          f"computed {_when(scores['computed_at'])}")
    aggregates: Mapping[str, Any] = scores["aggregates"]
    _print_table(["MEASURE", "MEAN"], [[m, _number(v)] for m, v in aggregates.items()],
                 indent=2)
    per_question: Mapping[str, Mapping[str, Any]] = scores["per_question"]
    measures = list(per_question)
    qids = sorted({qid for values in per_question.values() for qid in values})
    if qids:
        print("per question:")
        _print_table(["QID", *measures],
                     [[qid, *(_number(per_question[m].get(qid)) for m in measures)]
                      for qid in qids], indent=2)
    if scores.get("incomplete_questions"):
        print(f"{scores['incomplete_questions']} question(s) not fully judged yet")
    return EXIT_OK


# --- shared ----------------------------------------------------------------------------


def _campaign(slug: str) -> str:
    """The API path of a campaign (a slug as typed may hold anything)."""
    return "/campaigns/" + quote(slug, safe="")


def _api(*, need_token: bool = True) -> Api:
    found = credentials(need_token=need_token)
    return Api(found.site, found.token)


def _call(api: Api, request: Callable[[Api], Any]) -> Any:
    try:
        return request(api)
    finally:
        api.close()


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _when(text: str | None) -> str:
    """A time of the API (ISO 8601) in UTC, to the minute."""
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, indent: int) -> None:
    widths = [max(len(str(cell)) for cell in column)
              for column in zip(header, *rows, strict=True)]
    for cells in (header, *rows):
        line = "  ".join(str(cell).ljust(width) for cell, width in zip(cells, widths,
                                                                       strict=True))
        print(" " * indent + line.rstrip())
