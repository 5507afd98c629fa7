"""Organisers' audited overrides of runs and quotas (who, when, why): only the run's row and
the audit line; grading.review.run_overrides queues what follows (docs/submissions.md)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from campaign.kinds import kind_of
from campaign.models import Team, Track
from campaign.text_fields import NOTE, text_problem
from submissions.models import (
    MAX_GRANT,
    FailureKind,
    QuotaGrant,
    Run,
    RunAction,
    RunActionKind,
    RunStatus,
)

# --- why an override is refused (tests match exactly) ---
REASON_REQUIRED = "a reason is required: the team reads it beside the action"
NOT_CURRENT = ("{name} of {created} UTC has been replaced by a later upload: act on its "
               "current version")
NOT_ACCEPTED = "run {name} did not pass validation: there is nothing to {action}"
NOT_GRADED = "run {name} is a PR run: PR runs are scored, never graded"
ALREADY_WITHDRAWN = "run {name} is withdrawn already"
NOT_WITHDRAWN = "run {name} is not withdrawn: there is nothing to restore"
NOT_FAILED = "run {name} is {status}, not failed: there is no failure to {action}"
ALREADY_CHARGED = "the failure of run {name} is charged to it already"
ALREADY_REFUNDED = "the failure of run {name} is refunded already (the platform's fault)"
BAD_EXTRA_RUNS = "extra runs: expected a whole number from 1 to {most}, found {found}"
TEAM_NOT_IN_CAMPAIGN = "team {team} is not a team of the campaign of track {track}"


class OverrideRefused(Exception):
    """The override is not done; `status` is the HTTP status that fits (400 for bad
    input, 409 for a run whose state does not allow it), `field` the input at fault."""

    def __init__(self, status: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


def _checked_reason(reason: str) -> str:
    # Held to the rule of every free text (docs/formats.md), as a description is.
    problem = text_problem(reason, what="reason", line_breaks=True, cap=NOTE)
    if problem is not None:
        raise OverrideRefused(400, problem, "reason")
    if not reason.strip():
        raise OverrideRefused(400, REASON_REQUIRED, "reason")
    return reason.strip()


def _check_allowed(run: Run, action: RunActionKind) -> None:
    """OverrideRefused (409) unless `action` makes sense for `run` as it stands now."""
    if not run.is_current:
        raise OverrideRefused(409, NOT_CURRENT.format(
            name=run.name, created=run.created_at.strftime("%Y-%m-%d %H:%M:%S")))
    if run.status not in RunStatus.ACCEPTED:
        raise OverrideRefused(409, NOT_ACCEPTED.format(name=run.name, action=action.value))
    if action == RunActionKind.RERUN and not kind_of(run.track.kind).graded:
        raise OverrideRefused(409, NOT_GRADED.format(name=run.name))
    if action == RunActionKind.WITHDRAW and run.withdrawn:
        raise OverrideRefused(409, ALREADY_WITHDRAWN.format(name=run.name))
    if action == RunActionKind.RESTORE and not run.withdrawn:
        raise OverrideRefused(409, NOT_WITHDRAWN.format(name=run.name))
    if action in (RunActionKind.CHARGE, RunActionKind.REFUND):
        if run.status != RunStatus.FAILED:
            raise OverrideRefused(409, NOT_FAILED.format(
                name=run.name, status=run.get_status_display().lower(), action=action.value))
        if action == RunActionKind.CHARGE and run.failure_kind == FailureKind.RUN:
            raise OverrideRefused(409, ALREADY_CHARGED.format(name=run.name))
        if action == RunActionKind.REFUND and run.failure_kind == FailureKind.PLATFORM:
            raise OverrideRefused(409, ALREADY_REFUNDED.format(name=run.name))


def run_action_record(
    *, run: Run, action: RunActionKind, user: AbstractBaseUser, reason: str
) -> RunAction:
    """Do `action` (rerun, withdraw, restore, charge, refund) to `run`'s own row and audit it,
    under the team's lock; OverrideRefused for a bad reason or a run whose state does not allow
    it (docs/submissions.md, "Organisers' overrides")."""
    reason = _checked_reason(reason)
    with transaction.atomic():
        # The team's lock, as an upload takes it: the quota an upload checks stays true.
        Team.objects.select_for_update().get(pk=run.team_id)
        run = Run.objects.select_for_update().select_related("track").get(pk=run.pk)
        _check_allowed(run, action)
        if action == RunActionKind.WITHDRAW:
            run.withdrawn = True
        elif action == RunActionKind.RESTORE:
            run.withdrawn = False
        elif action == RunActionKind.CHARGE:
            run.failure_kind = FailureKind.RUN
        elif action in (RunActionKind.REFUND, RunActionKind.RERUN):
            run.failure_kind = FailureKind.PLATFORM
        run.save(update_fields=["withdrawn", "failure_kind", "updated_at"])
        record = RunAction(run=run, action=action, reason=reason, by_id=user.pk)
        record.full_clean()
        record.save()
    return record


def quota_grant(
    *, team: Team, track: Track, extra_runs: int, user: AbstractBaseUser, reason: str
) -> QuotaGrant:
    """Give `team` `extra_runs` more runs in `track` (1 to MAX_GRANT), audited; grants add up
    and count at once."""
    reason = _checked_reason(reason)
    if team.campaign_id != track.campaign_id:
        raise OverrideRefused(400, TEAM_NOT_IN_CAMPAIGN.format(team=team.name,
                                                               track=track.slug), "team")
    if isinstance(extra_runs, bool) or not 1 <= extra_runs <= MAX_GRANT:
        raise OverrideRefused(400, BAD_EXTRA_RUNS.format(most=MAX_GRANT, found=extra_runs),
                              "extra_runs")
    grant = QuotaGrant(team=team, track=track, extra_runs=extra_runs, reason=reason,
                       by_id=user.pk)
    grant.full_clean()
    grant.save()
    return grant
