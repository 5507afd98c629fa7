"""`python manage.py submit_runs SLUG FILE... --as USER`: enter run files from disk, each
named by its run name and submitted as an API upload is; a file already uploaded
unchanged is skipped, so the command may be run again (docs/submissions.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg, user_arg
from campaign.models import Track
from submissions.bulk import HEAD_BYTES, run_track
from submissions.checks import RunRefused
from submissions.models import Run, RunStatus
from submissions.services import run_submit


class Command(BaseCommand):
    help = "Submit run files (named by their run names) to a campaign, as a user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the campaign")
        parser.add_argument("files", nargs="+", type=Path, help="run files, named by run name")
        parser.add_argument("--as", dest="username", required=True,
                            help="who submits: an organiser (any team) or a team member")
        parser.add_argument("--track", help="the track of every file (default: found per file)")
        parser.add_argument("--keep-going", action="store_true",
                            help="exit 0 even when some files are refused or invalid")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        user = user_arg(options["username"])
        tracks = list(campaign.tracks.order_by("slug"))
        if options["track"] is not None:
            tracks = [track for track in tracks if track.slug == options["track"]]
            if not tracks:
                raise CommandError(f"campaign {campaign.slug} has no track {options['track']!r}")
        failures = 0
        for path in options["files"]:
            failures += not self._submit_one(path, tracks, user, fixed=options["track"] is not None)
        if failures and not options["keep_going"]:
            raise CommandError(f"{failures} of {len(options['files'])} file(s) not stored")

    def _submit_one(self, path: Path, tracks: list[Track], user: Any, *, fixed: bool) -> bool:
        name = path.name
        with path.open("rb") as file:
            head = file.read(HEAD_BYTES)
        try:
            track = tracks[0] if fixed else run_track(tracks=tracks, name=name, head=head)
        except RunRefused as refused:
            self.stderr.write(f"{path}: refused: {refused.detail}")
            return False
        with path.open("rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
        same = Run.objects.filter(track=track, name=name, sha256=digest)
        if (same.current() | same.filter(status=RunStatus.INVALID)).exists():
            self.stdout.write(f"{path}: unchanged since its last upload, skipped")
            return True
        try:
            with path.open("rb") as file:
                run = run_submit(track=track, user=user, name=name, file=file,
                                 size=path.stat().st_size, filename=name)
        except RunRefused as refused:
            self.stderr.write(f"{path}: refused: {refused.detail}")
            return False
        if run.status == RunStatus.INVALID:
            self.stderr.write(f"{path}: invalid, {len(run.validation_report)} problem(s):")
            for problem in run.validation_report:
                self.stderr.write(f"  line {problem['line']}, {problem['field']}: "
                                  f"{problem['message']}")
            return False
        self.stdout.write(f"{path}: stored as {run.name} (run {run.pk}, {run.records} records)")
        return True
