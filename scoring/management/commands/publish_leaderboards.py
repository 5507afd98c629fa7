"""`python manage.py publish_leaderboards SLUG [--track T] --as USER [--force]`: publish each
track's latest scores, all or nothing; refused while stale or resting on unreviewed doubt,
which `--force` goes over (docs/results.md, "Publishing")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from campaign.management.lookup import campaign_arg, user_arg
from campaign.models import Role
from campaign.selectors import campaign_role
from scoring.selectors import evaluation_latest
from scoring.services import PublishRefused, evaluation_publish

NOT_AN_ORGANISER = "'{username}' is not an organiser of {campaign}: only organisers publish"
NO_TRACK = "no track '{track}' in {campaign} (tracks: {tracks})"
FORCE_HINT = ", or publish with --force"
REFUSED = "track(s) {tracks} may not be published yet (see above): nothing was published"
PUBLISHED = "track {track}: published the scores of {computed} UTC"
FORCED = ("track {track}: published over {count} unreviewed doubtful judgment(s) (under the "
          "review threshold {threshold:g}); the override is recorded under {username}")


class Command(BaseCommand):
    help = "Publish the latest leaderboard of every (or one) track of a campaign."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--track", help="only this track")
        parser.add_argument("--as", dest="username", required=True,
                            help="the organiser who publishes (kept with the snapshot)")
        parser.add_argument("--force", action="store_true",
                            help="publish over doubtful judgments no organiser has reviewed "
                                 "(recorded); never over scores computed before the latest "
                                 "judgment edit")

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
        published: list[str] = []
        refused: dict[str, PublishRefused] = {}
        with transaction.atomic():
            for track in tracks.order_by("slug"):
                evaluation = evaluation_latest(track=track)
                if evaluation is None:
                    self.stderr.write(f"track {track.slug}: not scored yet, nothing to publish")
                    continue
                try:
                    publication = evaluation_publish(evaluation=evaluation, user=user,
                                                     force=options["force"])
                except PublishRefused as refusal:
                    refused[track.slug] = refusal
                    continue
                published.append(PUBLISHED.format(
                    track=track.slug, computed=f"{evaluation.computed_at:%Y-%m-%d %H:%M}"))
                override = publication.override
                if override is not None:
                    published.append(FORCED.format(track=track.slug,
                                                   count=override.doubtful_unreviewed,
                                                   threshold=override.review_below,
                                                   username=options["username"]))
            if refused:
                transaction.set_rollback(True)
        if refused:
            # Each message names its track.
            for track_refused in refused.values():
                for problem in track_refused.problems:
                    hint = FORCE_HINT if problem.waivable else ""
                    self.stderr.write(f"{problem.message}{hint}")
            raise CommandError(REFUSED.format(tracks=", ".join(refused)))
        for line in published:
            self.stdout.write(line)
