"""The `evalctl` command: login, submit, status, download-shared, scores. A refusal or an
unreachable site is printed as the server said it, with a non-zero exit status, never a
traceback (docs/deployment.md, "The participants' client")."""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from evalctl import __version__
from evalctl.api import Api, ClientError, call, site_url
from evalctl.config import Credentials, credentials, save
from evalctl.following import POLL_SECONDS, WAIT_SECONDS, status_command
from evalctl.results import download_shared_command, scores_command
from evalctl.submitting import submit_command
from evalctl.terminal import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STILL_PENDING,
    EXIT_USAGE,
    say,
)

EPILOG = f"""\
exit status: {EXIT_OK} done; {EXIT_ERROR} refused (by the check or the server), or the site
could not be reached; {EXIT_USAGE} a bad command line; {EXIT_STILL_PENDING} `status --wait` \
ran out of time.

The site and token come from `evalctl login`, kept in ~/.config/evalctl/config.json
(readable by you only), or from EVALCTL_SITE and EVALCTL_TOKEN."""


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except ClientError as error:
        say(f"error: {error.message}")
        for line in error.details:
            say(f"  {line}")
        return error.exit_code
    except KeyboardInterrupt:
        say("interrupted")
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


def login_command(args: argparse.Namespace) -> int:
    site = site_url(args.site) if args.site else credentials(need_token=False).site
    username = args.username
    if args.token:
        token = args.token
    else:
        username = username or _ask("username: ")
        password = _read_password() if args.password_stdin else getpass.getpass("password: ")
        answer = call(Api(site, None), lambda api: api.post(
            "/auth/token/", {"username": username, "password": password}))
        token = str(answer["token"])
    # Also the proof that a token given with --token is good: a bad one is a 401.
    campaigns = call(Api(site, token), lambda api: api.get("/campaigns/"))
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
