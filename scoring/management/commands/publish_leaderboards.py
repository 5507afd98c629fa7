"""`python manage.py publish_leaderboards SLUG [--track T] [--as USER]`: publish the latest
scores of each track (participants see them now, the public after results_release)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.models import Campaign
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
        campaign = Campaign.objects.filter(slug=options["slug"]).first()
        if campaign is None:
            raise CommandError(f"no campaign '{options['slug']}'")
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user '{options['username']}'")
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
