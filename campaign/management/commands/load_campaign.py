"""`python manage.py load_campaign FILE.yaml`: create or update a campaign."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.campaign_file import CampaignFileError, read_campaign_file
from campaign.services import campaign_load


class Command(BaseCommand):
    help = (
        "Create or update a campaign from its YAML description (idempotent; never "
        "deletes runs or judgments). Paths in the file are relative to it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the campaign's YAML file")

    def handle(self, *args: Any, **options: Any) -> None:
        file: Path = options["file"]
        try:
            spec = read_campaign_file(file)
            report = campaign_load(spec=spec)
        except CampaignFileError as exc:
            raise CommandError(
                f"{file}: not loaded, nothing changed ({len(exc.problems)} problem(s)):\n"
                + "\n".join(f"  {problem}" for problem in exc.problems)
            ) from None
        except ValidationError as exc:
            raise CommandError(f"{file}: not loaded, nothing changed: {exc}") from None
        for warning in report.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        self.stdout.write(self.style.SUCCESS(report.summary()))
