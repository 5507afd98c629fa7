"""`python manage.py demo_accounts SLUG`: give a demo campaign's people fixed, printed
passwords and API tokens; for `make demo` only, never a real campaign."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from rest_framework.authtoken.models import Token

from campaign.management.lookup import campaign_arg
from campaign.models import Role

DEMO_PASSWORD = "{username}-demo-2026"


class Command(BaseCommand):
    help = "Set printed demo passwords and API tokens for a demo campaign's members."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the demo campaign's slug")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        lines = []
        for membership in campaign.memberships.select_related("user", "team"):
            user = membership.user
            password = DEMO_PASSWORD.format(username=user.username)
            user.set_password(password)
            # Organisers get the Django admin too (campaign editing), as `load_campaign`
            # gives it; no one loses staff status here, which may have other reasons.
            if membership.role == Role.ORGANISER:
                user.is_staff = True
            user.save()
            token, _ = Token.objects.get_or_create(user=user)
            who = "organiser" if membership.team is None else f"participant, {membership.team.name}"
            lines.append(f"  {user.username:<8} {password:<22} ({who})  API token {token.key}")
        self.stdout.write("Demo accounts (username, password, role, API token):")
        self.stdout.write("\n".join(lines))
