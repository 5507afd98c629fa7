"""`python manage.py publish_leaderboards SLUG [--track T] [--as USER]`: publish the latest
scores of each track (participants see them now, the public after results_release)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg, user_arg
from campaign.models import Role
from campaign.selectors import campaign_role
from scoring.models import Evaluation
from scoring.services import evaluation_publish

NOT_AN_ORGANISER = "'{username}' is not an organiser of {campaign}: only organisers publish"
NO_TRACK = "no track '{track}' in {campaign} (tracks: {tracks})"


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
        # The same rule as the API and the organiser pages: the command is no back door.
        if campaign_role(campaign=campaign, user=user) != Role.ORGANISER:
            raise CommandError(NOT_AN_ORGANISER.format(username=options["username"],
                                                       campaign=campaign.slug))
        tracks = campaign.tracks.all()
        if options["track"]:
            tracks = tracks.filter(slug=options["track"])
            if not tracks.exists():
                known = ", ".join(campaign.tracks.order_by("slug")
                                  .values_list("slug", flat=True)) or "none"
                raise CommandError(NO_TRACK.format(track=options["track"],
                                                   campaign=campaign.slug, tracks=known))
        for track in tracks.order_by("slug"):
            evaluation = Evaluation.objects.filter(track=track).order_by(
                "-computed_at", "-id").first()
            if evaluation is None:
                self.stderr.write(f"track {track.slug}: not scored yet, nothing to publish")
                continue
            evaluation_publish(evaluation=evaluation, user=user)
            self.stdout.write(f"track {track.slug}: published the scores of "
                              f"{evaluation.computed_at:%Y-%m-%d %H:%M} UTC")
