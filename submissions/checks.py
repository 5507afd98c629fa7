"""What refuses a run before its file is read: who may submit, whether the campaign and
track are open, the run's name, team and size, and the team's quota (docs/submissions.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from campaign.kinds import behaviour, kind_of, with_article
from campaign.models import Campaign, Role, Team, Track
from campaign.selectors import campaign_membership, track_window_refusal, track_windows
from campaign.text_fields import NOTE, text_problem
from submissions.formats.run_names import parse_run_name
from submissions.formats.trec_run import parse_rubric_run_name
from submissions.formats.upload_window import campaign_time
from submissions.quota import quota_standing

# --- why an upload is refused before its content is looked at (tests match exactly) ---
BAD_RUN_NAME = (
    "found run name {name!r}; expected [Team]-PG-[n] or [Team]-PO-[n] for a PR run, "
    "[Team]-AC-[n] for an AC run"
)
WRONG_TRACK = "run {name} is {kind} run; expected a name for the {track} track ({kinds})"
BAD_RUN_NUMBER = "run {name} has number {number}; expected 1 to {max_runs} in track {track}"
UNKNOWN_TEAM = "run {name} names team {team}, which is not a team of campaign {campaign}"
NOT_A_MEMBER = "you are not a participant or organiser of campaign {campaign}"
NOT_YOUR_TEAM = "run {name} belongs to team {team}; you may submit runs for team {own} only"
# A track not open yet or closed is refused in submissions.formats.upload_window's words
# (the client's too); these refuse a campaign none of whose tracks is open.
CAMPAIGN_NOT_OPEN_YET = (
    "campaign {campaign} takes runs from {opens} ({zone}, with the questions); it is {now} "
    "there now"
)
CAMPAIGN_CLOSED = (
    "every track of campaign {campaign} is closed: {tracks} ({zone}); it is {now} there "
    "now: uploads are refused"
)
TOO_LARGE = "the file is {size} bytes; the limit is {limit} bytes"
TOO_MANY_RUNS = (
    "team {team} already has {count} runs in track {track} ({names}); the limit is "
    "{max_runs}: replace one by uploading it again under its name"
)
TOO_MANY_RUNS_WITH_ZIP = (
    "team {team} would have {count} runs in track {track} with {name} and the runs before it "
    "in this upload ({names}); the limit is {max_runs}"
)
BAD_RUBRIC_RUN_NAME = (
    "found run name {name!r}; expected [Team]-[label] for a {kind} run of track {track}, "
    "the label of letters, digits and '_', at most 32"
)


class RunRefused(Exception):
    """The upload is refused as a whole; `status` is the HTTP status that fits."""

    def __init__(self, status: int, detail: str, errors: list[dict[str, Any]] | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors if errors is not None else [{"field": "", "message": detail}]


def run_check_membership(*, campaign: Campaign, user: AbstractBaseUser) -> None:
    """RunRefused (403) unless `user` may submit runs to `campaign` at all, as a bulk upload
    checks before it unpacks anything."""
    membership = campaign_membership(campaign=campaign, user=user)
    if membership is None and not getattr(user, "is_superuser", False):
        raise RunRefused(403, NOT_A_MEMBER.format(campaign=campaign.slug))


def run_check_campaign_open(*, campaign: Campaign, user: AbstractBaseUser, now: datetime) -> None:
    """RunRefused (403) for what refuses any run file `user` sends to `campaign` now: no
    part in it, or no track taking participants' runs. What the API checks before it
    reads an upload's body; `run_submit` checks each run's own track again."""
    membership = campaign_membership(campaign=campaign, user=user)
    superuser = bool(getattr(user, "is_superuser", False))
    if membership is None and not superuser:
        raise RunRefused(403, NOT_A_MEMBER.format(campaign=campaign.slug))
    if superuser or (membership is not None and membership.role == Role.ORGANISER):
        return  # organisers may enter runs outside the window
    windows = track_windows(campaign=campaign, now=now)
    refusals = [window.refusal for window in windows if window.refusal is not None]
    if not windows or len(refusals) < len(windows):
        return
    if len(refusals) == 1:
        raise RunRefused(403, refusals[0])
    zone, local_now = campaign.timezone, campaign_time(now, campaign.timezone)
    if now < campaign.topics_release:  # every track opens with the questions
        raise RunRefused(403, CAMPAIGN_NOT_OPEN_YET.format(
            campaign=campaign.slug, opens=campaign_time(campaign.topics_release, zone),
            zone=zone, now=local_now))
    closed = ", ".join(f"{window.track.slug} at {window.due}" for window in windows)
    raise RunRefused(403, CAMPAIGN_CLOSED.format(campaign=campaign.slug, tracks=closed,
                                                 zone=zone, now=local_now))


def run_check_upload(
    *, track: Track, user: AbstractBaseUser, name: str, size: int, now: datetime,
    description: str = "", pending: Mapping[str, Collection[str]] | None = None,
) -> Team:
    """The run's team, or RunRefused for what `run_submit` refuses before reading a file;
    `pending` names the runs of the same zip before this one. Advisory: `run_submit` checks
    again under the team's lock."""
    team, _ = check_rules(track=track, user=user, name=name, size=size, now=now,
                           description=description)
    check_quota(track=track, team=team, name=name,
                 pending=(pending or {}).get(team.name, ()))
    return team


def check_rules(
    *, track: Track, user: AbstractBaseUser, name: str, size: int, now: datetime,
    description: str = "",
) -> tuple[Team, bool]:
    """The run's team and whether the uploader organises, or RunRefused."""
    campaign = track.campaign
    # Every way in (API, pages, zip, submit_runs) passes here: the description is held to
    # the rule of every free text (docs/formats.md) before it can reach the database.
    problem = text_problem(description, what="description", line_breaks=True, cap=NOTE)
    if problem is not None:
        raise RunRefused(400, problem, [{"field": "description", "message": problem}])
    team_name = behaviour(kind_of(track.kind).team_of)(track, name)

    membership = campaign_membership(campaign=campaign, user=user)
    organiser = bool(getattr(user, "is_superuser", False)) or (
        membership is not None and membership.role == Role.ORGANISER
    )
    if membership is None and not organiser:
        raise RunRefused(403, NOT_A_MEMBER.format(campaign=campaign.slug))
    team = Team.objects.filter(campaign=campaign, name=team_name).first()
    if team is None:
        message = UNKNOWN_TEAM.format(name=name, team=team_name, campaign=campaign.slug)
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    if not organiser and (membership is None or membership.team_id != team.pk):
        own = membership.team.name if membership and membership.team else "none"
        raise RunRefused(403, NOT_YOUR_TEAM.format(name=name, team=team.name, own=own))

    # Organisers may enter runs outside the window (e.g. runs sent to them by mail).
    if not organiser:
        refusal = track_window_refusal(track=track, now=now)
        if refusal is not None:
            raise RunRefused(403, refusal)
    limit = settings.RUN_MAX_BYTES
    if size > limit:
        message = TOO_LARGE.format(size=size, limit=limit)
        raise RunRefused(413, message, [{"field": "file", "message": message}])
    return team, organiser


def r2c2_run_team(track: Track, name: str) -> str:
    """The team a PR or AC run name names, or RunRefused."""
    run_name = parse_run_name(name)
    if run_name is None:
        raise RunRefused(400, BAD_RUN_NAME.format(name=name),
                         [{"field": "name", "message": BAD_RUN_NAME.format(name=name)}])
    if run_name.kind != track.kind:
        message = WRONG_TRACK.format(name=name, kind=with_article(run_name.kind.upper()),
                                     track=track.slug, kinds=kind_of(track.kind).run_names)
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    # The highest number depends on the team's standing (refunds, grants, withdrawals):
    # `check_quota` checks it once the team is known.
    return run_name.team


def rubric_run_team(track: Track, name: str) -> str:
    """The team a ranking or response run name names, or RunRefused; the name has no number,
    so the quota is a count."""
    run_name = parse_rubric_run_name(name)
    if run_name is None:
        message = BAD_RUBRIC_RUN_NAME.format(name=name, kind=track.kind, track=track.slug)
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    return run_name.team


def check_quota(
    *, track: Track, team: Team, name: str, pending: Collection[str] = ()
) -> None:
    """RunRefused unless `team` may have one more run, `name`, in `track` (a run of the
    same name is replaced, not added); its runs that do not count, and what organisers
    granted, as submissions.quota says. An R2C2 name's number is checked here too."""
    standing = quota_standing(track=track, team=team)
    why = standing.explained()
    run_name = None if track.is_rubric else parse_run_name(name)
    if run_name is not None and run_name.number > standing.highest_number:
        message = BAD_RUN_NUMBER.format(name=name, number=run_name.number,
                                        max_runs=standing.highest_number,
                                        track=track.slug) + why
        raise RunRefused(400, message, [{"field": "name", "message": message}])
    # A run that does not count now makes no room when replaced: its new version counts.
    others = set(standing.counted) - {name}
    if len(others) >= standing.limit:
        raise RunRefused(409, TOO_MANY_RUNS.format(
            team=team.name, count=len(others), track=track.slug, names=", ".join(sorted(others)),
            max_runs=standing.limit) + why)
    with_pending = others | (set(pending) - {name})
    if len(with_pending) >= standing.limit:
        raise RunRefused(409, TOO_MANY_RUNS_WITH_ZIP.format(
            team=team.name, count=len(with_pending) + 1, track=track.slug, name=name,
            names=", ".join(sorted(with_pending)), max_runs=standing.limit) + why)
