"""`python manage.py export_campaign SLUG [--out PATH] [--team NAME]`: the campaign's
results archive (scoring/archive.py), for `python -m scoring.replay` to check."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from campaign.management.lookup import campaign_arg
from scoring.archive import archive_filename, campaign_archive_write

UNKNOWN_TEAM = "campaign {slug} has no team {team!r}"
NOT_A_FOLDER = "{path}: no such folder"


class Command(BaseCommand):
    help = ("Write a campaign's results archive: campaign file, questions, every run version, "
            "marked runs, judgments with their history, prompts, qrels, published "
            "leaderboards, software versions and a sha256 manifest.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the campaign")
        parser.add_argument("--out", help="the .zip to write (default: a dated name here; "
                                          "a folder: that name in it)")
        parser.add_argument("--team", help="only the public part this team may download")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        team = None
        if options["team"]:
            team = campaign.teams.filter(name=options["team"]).first()
            if team is None:
                raise CommandError(UNKNOWN_TEAM.format(slug=campaign.slug, team=options["team"]))
        now = timezone.now()
        out = Path(options["out"] or ".")
        if options["out"] is None or out.is_dir():
            out = out / archive_filename(campaign=campaign, team=team, now=now)
        if not out.parent.is_dir():
            raise CommandError(NOT_A_FOLDER.format(path=out.parent))
        # Written beside its final name and renamed when complete: a failure leaves no
        # archive that looks whole.
        handle, partial = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as target:
                summary = campaign_archive_write(campaign=campaign, target=target, team=team,
                                                 now=now)
            os.replace(partial, out)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
        self.stdout.write(
            f"Wrote {out} ({summary.scope}): {summary.members} member(s), {summary.runs} run "
            f"version(s), {summary.judgments} judgment(s), leaderboards: "
            f"{', '.join(summary.leaderboards) or 'none published'}")
        self.stdout.write(f"Check it with: python -m scoring.replay {out}")
