"""`python manage.py score SLUG`: recompute every leaderboard of a campaign."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from campaign.management.lookup import campaign_arg
from campaign.management.progress import StepBar
from scoring.selectors import leaderboard
from scoring.services import campaign_score


class Command(BaseCommand):
    help = "Score every track of a campaign from its current judgments (a new snapshot each)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the campaign")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        with StepBar("scoring") as bar:
            evaluations = campaign_score(campaign=campaign, progress=bar)
        for evaluation in evaluations:
            board = leaderboard(evaluation=evaluation)
            self.stdout.write(f"Track {board.track}: {len(board.rows)} run(s) scored "
                              f"(evaluation {evaluation.pk}, judge: {board.judge or '-'})")
            # The catalogue's order, not the stored one: the same order on every database
            # (PostgreSQL's jsonb does not keep the keys' order).
            keys = [m.key for m in board.measures()]
            for row in board.rows:
                shown = {k: round(value, 4) for k in keys
                         if isinstance(value := row.score(k), float)}
                self.stdout.write(f"  {row.run:<16} {shown}")
