"""Reads for the run quota (which of a team's runs count, and why not the others) and the
audit lines of organisers' overrides (docs/submissions.md, "Quotas")."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import QuerySet, Sum

from campaign.models import Campaign, Team, Track
from submissions.models import FailureKind, QuotaGrant, Run, RunAction, RunStatus

# --- how a refusal explains the quota (tests match exactly) ---
QUOTA_COUNTED = ("{count} run(s) count against the limit of {limit}: {max_runs} per team "
                 "+ {granted} granted by the organisers")
QUOTA_REFUNDED = ("{count} refunded (not counted) because grading failed for a platform "
                  "reason, not the run's: {runs}")
QUOTA_WITHDRAWN = "{count} withdrawn by the organisers (not counted): {names}"
#: A failure reason quoted in a refusal is cut here (the run page has it whole).
REASON_QUOTED = 160


@dataclass(frozen=True)
class RefundedRun:
    """A run that does not count: its grading failed for a platform reason."""

    name: str
    reason: str

    def __str__(self) -> str:
        reason = self.reason or "no reason recorded"
        if len(reason) > REASON_QUOTED:
            reason = reason[:REASON_QUOTED - 1] + "…"
        return f"{self.name} ({reason})"


@dataclass(frozen=True)
class QuotaStanding:
    """Where one team stands against its quota in one track."""

    team: str
    track: str
    max_runs: int  # the track's max_runs_per_team
    granted: int  # extra runs the organisers granted, all grants together
    counted: tuple[str, ...]  # names of the current runs that count
    refunded: tuple[RefundedRun, ...]
    withdrawn: tuple[str, ...]

    @property
    def limit(self) -> int:
        """How many runs may count at once."""
        return self.max_runs + self.granted

    @property
    def highest_number(self) -> int:
        """The highest R2C2 run number the team may use: each uncounted run makes room."""
        uncounted = {run.name for run in self.refunded} | set(self.withdrawn)
        return self.limit + len(uncounted)

    @property
    def is_plain(self) -> bool:
        """Nothing granted, refunded or withdrawn: the track's own limit, as it says."""
        return not (self.granted or self.refunded or self.withdrawn)

    def explained(self) -> str:
        """What a refusal adds when the limit is not the track's plain one: how many runs
        count, how many were refunded and why, which were withdrawn; empty otherwise."""
        if self.is_plain:
            return ""
        parts = [QUOTA_COUNTED.format(count=len(self.counted), limit=self.limit,
                                      max_runs=self.max_runs, granted=self.granted)]
        if self.refunded:
            parts.append(QUOTA_REFUNDED.format(
                count=len(self.refunded), runs="; ".join(str(r) for r in self.refunded)))
        if self.withdrawn:
            parts.append(QUOTA_WITHDRAWN.format(count=len(self.withdrawn),
                                                names=", ".join(self.withdrawn)))
        return " (" + "; ".join(parts) + ")"


def _standing(track: Track, team: Team, runs: list[Run], granted: int) -> QuotaStanding:
    counted: list[str] = []
    refunded: list[RefundedRun] = []
    withdrawn: list[str] = []
    for run in sorted(runs, key=lambda r: r.name):
        if run.withdrawn:
            withdrawn.append(run.name)
        elif run.status == RunStatus.FAILED and run.failure_kind == FailureKind.PLATFORM:
            refunded.append(RefundedRun(run.name, run.failure_reason))
        else:
            counted.append(run.name)
    return QuotaStanding(team=team.name, track=track.slug, max_runs=track.max_runs_per_team,
                         granted=granted, counted=tuple(counted), refunded=tuple(refunded),
                         withdrawn=tuple(withdrawn))


def quota_standing(*, track: Track, team: Team) -> QuotaStanding:
    """Where `team` stands against its quota in `track`, read now (two queries)."""
    runs = list(Run.objects.filter(track=track, team=team).current()
                .only("name", "status", "failure_kind", "failure_reason", "withdrawn"))
    granted = (QuotaGrant.objects.filter(track=track, team=team)
               .aggregate(total=Sum("extra_runs"))["total"] or 0)
    return _standing(track, team, runs, granted)


def quota_standings(*, campaign: Campaign, team: Team | None = None) -> list[QuotaStanding]:
    """Every team's standing (or `team`'s alone) in every track of `campaign`, by team
    and track; three queries however many teams and tracks."""
    teams = [team] if team is not None else list(campaign.teams.order_by("name"))
    tracks = list(campaign.tracks.order_by("slug"))
    runs: dict[tuple[int, int], list[Run]] = defaultdict(list)
    for run in (Run.objects.filter(track__campaign=campaign, team__in=teams).current()
                .only("team_id", "track_id", "name", "status", "failure_kind",
                      "failure_reason", "withdrawn")):
        runs[run.team_id, run.track_id].append(run)
    granted: dict[tuple[int, int], int] = {
        (row["team_id"], row["track_id"]): row["total"]
        for row in QuotaGrant.objects.filter(team__in=teams, track__campaign=campaign)
        .values("team_id", "track_id").annotate(total=Sum("extra_runs"))
    }
    return [_standing(track, each, runs[each.pk, track.pk], granted.get((each.pk, track.pk), 0))
            for each in teams for track in tracks]


# --- the audit lines (who, when, why): organisers see all, a team its own -------------
def run_actions(*, run: Run) -> QuerySet[RunAction]:
    """The organisers' actions on every version of `run`'s name, oldest first (a
    withdrawal of an earlier version stays in the story of the name). The caller has
    checked that the reader may see the run (its team, or an organiser)."""
    return (RunAction.objects.filter(run__track_id=run.track_id, run__name=run.name)
            .select_related("by", "run").order_by("at", "pk"))


def team_run_actions(*, campaign: Campaign, team: Team) -> QuerySet[RunAction]:
    """The organisers' actions on `team`'s runs in `campaign`, newest first."""
    return (RunAction.objects.filter(run__track__campaign=campaign, run__team=team)
            .select_related("by", "run__track").order_by("-at", "-pk"))


def quota_grants(*, campaign: Campaign, team: Team | None = None) -> QuerySet[QuotaGrant]:
    """The grants of extra runs in `campaign` (to `team` only, if given), newest first."""
    grants = QuotaGrant.objects.filter(track__campaign=campaign)
    if team is not None:
        grants = grants.filter(team=team)
    return grants.select_related("by", "team", "track").order_by("-at", "-pk")
