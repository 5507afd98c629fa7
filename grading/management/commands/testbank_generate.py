"""`python manage.py testbank_generate SLUG [--target questions|nuggets] [--n 10]`: draft N items
per query without items, in this process; exits non-zero if a query got none (docs/rubric.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg
from campaign.vocabulary import PromptTarget
from grading.llm.prompts import DRAFT_TARGET, MAX_GENERATED_ITEMS
from grading.rubric.drafting import testbank_generate
from grading.setup import official_judge
from infrastructure.queueing import QueueUnavailable


def _item_count(value: str) -> int:
    number = int(value)
    if not 1 <= number <= MAX_GENERATED_ITEMS:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = "Draft test-bank items with the judge for the queries that have none."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the campaign")
        parser.add_argument("--target", choices=[t.value for t in PromptTarget],
                            default=DRAFT_TARGET.value,
                            help="nuggets (the default) or exam questions with an answer key")
        parser.add_argument("--n", type=_item_count, default=10, metavar="N",
                            help=f"items per query, 1..{MAX_GENERATED_ITEMS} (default 10)")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        judge = official_judge()
        self.stdout.write(f"Judge: {judge.identity.model} at {judge.config.base_url}")
        try:
            report = testbank_generate(campaign=campaign, judge=judge,
                                       target=options["target"], n=options["n"])
        except QueueUnavailable as down:
            # The drafts are stored; only the grading of them on graded runs was not queued.
            raise CommandError(str(down.detail)) from down
        for qid, count in report.drafted.items():
            self.stdout.write(f"{qid}: {count} draft item(s)")
        for qid, reason in report.failed.items():
            self.stderr.write(f"{qid}: nothing stored: {reason}")
        if report.skipped:
            self.stdout.write(f"{len(report.skipped)} query(ies) already have items: "
                              f"{', '.join(report.skipped)}")
        if report.failed:
            raise CommandError(f"{len(report.failed)} query(ies) got no draft items")
