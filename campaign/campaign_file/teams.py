"""The `organisers:` and `teams:` of a campaign file: who may act in the campaign, a user in
one team at most and an organiser in none (docs/campaign-file.md, "Top-level keys")."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from campaign.campaign_file.fields import Matching, Usernames
from campaign.campaign_file.sections import Items, Section

BAD_TEAM_NAME = (
    "'{value}' is not a team name "
    "(expected letters, digits, '_' and '-', starting with a letter or digit, at most 64)"
)
DUPLICATE_TEAM = "duplicate team name '{name}'"
USER_IN_TWO_TEAMS = "user '{user}' is in both {first} and {second}"
ORGANISER_IN_TEAM = "user '{user}' is an organiser and cannot be in team {team}"

# Run names start with the team's name: [Team]-AC-1, so no spaces, ';', ':' or '/'.
TEAM_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class TeamSpec:
    name: str
    members: tuple[str, ...]


class Team(Section):
    name = Matching(TEAM_NAME_RE, BAD_TEAM_NAME)
    members = Usernames(default=())

    def make(self, values: dict[str, Any]) -> TeamSpec | None:
        if "name" not in values:
            return None
        return TeamSpec(name=values["name"], members=values.get("members", ()))


class Teams(Items):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=Team(), expected="a list of teams", **kwargs)


def team_problems(teams: Iterable[TeamSpec | None], organisers: Collection[str]) -> list[str]:
    """Each team name once, each user in one team at most and no organiser in any."""
    problems: list[str] = []
    names: set[str] = set()
    team_of: dict[str, str] = {}
    for team in teams:
        if team is None:
            continue
        if team.name in names:
            problems.append(DUPLICATE_TEAM.format(name=team.name))
            continue
        names.add(team.name)
        for user in team.members:
            if user in organisers:
                problems.append(ORGANISER_IN_TEAM.format(user=user, team=team.name))
            elif user in team_of:
                problems.append(USER_IN_TWO_TEAMS.format(user=user, first=team_of[user],
                                                         second=team.name))
            else:
                team_of[user] = team.name
    return problems
