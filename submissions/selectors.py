"""Reads for runs: what each person may see, and the lookups validation needs."""

from __future__ import annotations

import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import IO

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import OuterRef, QuerySet, Subquery

from campaign.kinds import kind_of
from campaign.models import Campaign, CorpusPassage, Role, Team
from campaign.selectors import campaign_membership, campaign_role
from submissions.models import PassageRecord, RankedPassage, Run, RunQuerySet, RunStatus


def shared_pr_runs(*, campaign: Campaign, now: datetime) -> RunQuerySet:
    """The PR runs shared with every team: all current valid ones, once pr_due has passed."""
    if now <= campaign.pr_due:
        return Run.objects.none()
    return (Run.objects.filter(track__campaign=campaign).of_kinds(shared=True).current()
            .accepted().select_related("team", "track").order_by("name"))


def visible_pr_run_names(*, campaign: Campaign, team: Team, now: datetime) -> dict[str, int]:
    """PR runs an AC run of `team` may cite, as run name -> id of its current version: the
    team's own, and after pr_due every shared one."""
    runs = Run.objects.filter(track__campaign=campaign).of_kinds(shared=True).current().accepted()
    if now <= campaign.pr_due:
        runs = runs.filter(team=team)
    return dict(runs.values_list("name", "id"))


def pr_run_ranks(*, run_id: int) -> dict[str, frozenset[int]]:
    """qID -> the PassageRanks a PR run returned for it."""
    ranks: dict[str, set[int]] = defaultdict(set)
    for qid, rank in PassageRecord.objects.filter(run_id=run_id).values_list("qid", "rank"):
        ranks[qid].add(rank)
    return {qid: frozenset(found) for qid, found in ranks.items()}


def runs_visible(
    *, campaign: Campaign, user: AbstractBaseUser | AnonymousUser, now: datetime,
    include_shared: bool = True,
) -> RunQuerySet:
    """Every run version `user` may see in `campaign`: all for organisers; a participant's
    team's (invalid ones too) and, after pr_due, the shared PR runs; none for the public."""
    runs = Run.objects.filter(track__campaign=campaign).select_related("team", "track")
    role = campaign_role(campaign=campaign, user=user)
    if role == Role.ORGANISER:
        return runs
    membership = campaign_membership(campaign=campaign, user=user)
    if membership is None or membership.team_id is None:
        return runs.none()
    own = runs.filter(team_id=membership.team_id)
    if include_shared and now > campaign.pr_due:
        return own | runs.of_kinds(shared=True).current().accepted()
    return own


def run_for_user(
    *, run_id: int, user: AbstractBaseUser | AnonymousUser, now: datetime
) -> Run | None:
    """The run if `user` may see it, else None (the caller answers 404 either way)."""
    run = Run.objects.select_related("track__campaign", "team").filter(pk=run_id).first()
    if run is None:
        return None
    visible = runs_visible(campaign=run.track.campaign, user=user, now=now)
    return run if visible.filter(pk=run.pk).exists() else None


def shared_pr_runs_bundle(*, campaign: Campaign, now: datetime) -> IO[bytes]:
    """A zip of every shared PR run under its run name, spooled (to a temporary file when
    large) and rewound; the caller closes it."""
    bundle = tempfile.SpooledTemporaryFile(max_size=32 << 20)  # noqa: SIM115 (returned)
    with zipfile.ZipFile(bundle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for run in shared_pr_runs(campaign=campaign, now=now):
            with run.file.open("rb") as source, archive.open(run.name, "w") as target:
                while chunk := source.read(1 << 20):
                    target.write(chunk)
    bundle.seek(0)
    return bundle


def runs_by_team(*, campaign: Campaign) -> list[tuple[Team, dict[str, list[Run]]]]:
    """Every team with its current runs per track slug (the organiser's overview)."""
    current = Run.objects.filter(track__campaign=campaign).current().select_related(
        "track").order_by("name")
    by_team: dict[int, dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for run in current:
        by_team[run.team_id][run.track.slug].append(run)
    return [(team, dict(by_team.get(team.pk, {}))) for team in campaign.teams.order_by("name")]


def invalid_uploads(*, campaign: Campaign, limit: int = 50) -> QuerySet[Run]:
    """The latest uploads that failed validation, newest first."""
    return Run.objects.filter(track__campaign=campaign, status=RunStatus.INVALID).select_related(
        "team", "track", "uploaded_by").order_by("-created_at")[:limit]


CORPUS_TEXT_LOST = "docid {docid} of run {run} is no longer in the campaign's corpus"


@dataclass(frozen=True)
class PassageToGrade:
    """A passage of a ranking or response run that grading rates against the test bank."""

    qid: str
    docid: str
    rank: int
    text: str


def passages_to_grade(*, run: Run, qids: Collection[str] | None = None) -> list[PassageToGrade]:
    """What grading rates of `run` (`RankedPassageQuerySet.graded`), by qid and rank, with
    texts, in one query; empty for PR and AC runs. `qids` keeps those queries only."""
    track = run.track
    passages = RankedPassage.objects.filter(run=run).graded().order_by("qid", "rank")
    if qids is not None:
        passages = passages.filter(qid__in=sorted(qids))
    if kind_of(track.kind).ranked:  # its docids are the corpus's: the text is there
        corpus_text = CorpusPassage.objects.filter(
            campaign_id=track.campaign_id, docid=OuterRef("docid")).values("text")[:1]
        rows: Iterable[tuple[str, str, int, str | None]] = (
            passages.annotate(corpus_text=Subquery(corpus_text))
            .values_list("qid", "docid", "rank", "corpus_text"))
    else:
        rows = passages.values_list("qid", "docid", "rank", "text")
    graded = []
    for qid, docid, rank, text in rows:
        # Docids were checked against the corpus at upload, and a corpus keeps its docids
        # (CorpusPassage): a missing text is a broken invariant, never an empty passage.
        if text is None:
            raise LookupError(CORPUS_TEXT_LOST.format(docid=docid, run=run.name))
        graded.append(PassageToGrade(qid=qid, docid=docid, rank=rank, text=text))
    return graded
