"""`python manage.py publish_leaderboards SLUG [--track T] [--as USER]`: publish the latest
scores of each track (participants see them now, the public after results_release)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from campaign.management.lookup import campaign_arg, user_arg
from scoring.models import Evaluation
from scoring.services import evaluation_publish


class Command(BaseCommand):
    help = "Publish the latest leaderboard of every (or one) track of a campaign."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--track", help="only this track")
        parser.add_argument("--as", dest="username", required=True,
                            help="the organiser who publishes (kept with the snapshot)")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        user = user_arg(options["username"])
        tracks = campaign.tracks.all()
        if options["track"]:
            tracks = tracks.filter(slug=options["track"])
        for track in tracks.order_by("slug"):
            evaluation = Evaluation.objects.filter(track=track).order_by(
                "-computed_at", "-id").first()
            if evaluation is None:
                self.stderr.write(f"track {track.slug}: not scored yet, nothing to publish")
                continue
            evaluation_publish(evaluation=evaluation, user=user)
            self.stdout.write(f"track {track.slug}: published the scores of "
                              f"{evaluation.computed_at:%Y-%m-%d %H:%M} UTC")
