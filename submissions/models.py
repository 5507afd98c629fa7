"""Runs and the records parsed from them (what grading and scoring read)."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from campaign.kinds import kinds
from campaign.models import Team, Track


class RunStatus(models.TextChoices):
    """Where a run is in its life, from upload through validation, grading and scoring
    (docs/submissions.md, "A run's life")."""

    RECEIVED = "received", "Received"
    INVALID = "invalid", "Invalid"
    VALID = "valid", "Valid"
    QUEUED = "queued", "Queued"
    GRADING = "grading", "Grading"
    GRADED = "graded", "Graded"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"

    # The named sets are assigned after the class: inside an enum's body they would
    # become members themselves.
    ACCEPTED: ClassVar[frozenset[RunStatus]]
    AWAITING_GRADING: ClassVar[frozenset[RunStatus]]
    IN_GRADING: ClassVar[frozenset[RunStatus]]
    JUDGED: ClassVar[frozenset[RunStatus]]


# Passed validation and has its records: shareable and citable whatever grading and
# scoring do with it later (a failed grading is the judge's fault, not the run's).
RunStatus.ACCEPTED = frozenset({RunStatus.VALID, RunStatus.QUEUED, RunStatus.GRADING,
                                RunStatus.GRADED, RunStatus.SCORED, RunStatus.FAILED})
# What a grader should take: never graded, queued, or failed last time.
RunStatus.AWAITING_GRADING = frozenset({RunStatus.VALID, RunStatus.QUEUED, RunStatus.FAILED})
# A round of grading is not over while any current run of the campaign is here: the
# last run to leave it queues scoring (grading.work.grading).
RunStatus.IN_GRADING = frozenset({RunStatus.QUEUED, RunStatus.GRADING})
# Every record has its official label: what scoring and the qrels read.
RunStatus.JUDGED = frozenset({RunStatus.GRADED, RunStatus.SCORED})


class FailureKind(models.TextChoices):
    """Whose fault a grading failure was: the platform's (every failure grading records; not
    charged to the quota) or the run's own, when an organiser charges it (docs/submissions.md)."""

    PLATFORM = "platform", "The platform's"
    RUN = "run", "The run's own"


class RunQuerySet(models.QuerySet["Run"]):
    """The run lifecycle's questions, asked one way everywhere."""

    def current(self) -> RunQuerySet:
        """The current version of each run name (older versions are history)."""
        return self.filter(is_current=True)

    def accepted(self) -> RunQuerySet:
        """Runs that passed validation (RunStatus.ACCEPTED)."""
        return self.filter(status__in=RunStatus.ACCEPTED)

    def of_kinds(self, **facts: bool) -> RunQuerySet:
        """Runs of tracks whose kind has these facts (campaign.kinds): of_kinds(shared=True)."""
        return self.filter(track__kind__in=kinds(**facts))

    def in_grading(self) -> RunQuerySet:
        """Runs queued for grading or being graded (RunStatus.IN_GRADING)."""
        return self.filter(status__in=RunStatus.IN_GRADING)

    def judged(self) -> RunQuerySet:
        """Runs whose every record has an official label: GRADED or SCORED, or QUEUED
        again after a grading that succeeded (a post-edit's re-grade: the edited labels
        count at once, so its leaderboard need not wait for the worker)."""
        regrade = models.Q(status=RunStatus.QUEUED, graded_at__isnull=False, failure_reason="")
        return self.filter(models.Q(status__in=RunStatus.JUDGED) | regrade)

    def not_withdrawn(self) -> RunQuerySet:
        """Runs no organiser has withdrawn: what leaderboards, qrels and pools read."""
        return self.filter(withdrawn=False)


def run_upload_path(run: Run, filename: str) -> str:
    # Every version gets its own path: a replaced run's file stays in the history.
    return f"runs/{run.track.campaign.slug}/{run.team.name}/{run.name}/{run.sha256[:16]}-{filename}"


class Run(models.Model):
    """One uploaded version of a run file: a new upload of the name becomes `is_current` and
    older ones stay as history; a file that fails validation is an invalid row with its
    report and no file or records."""

    track = models.ForeignKey(Track, on_delete=models.PROTECT, related_name="runs")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="runs")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    file = models.FileField(upload_to=run_upload_path, max_length=300, blank=True)
    original_filename = models.CharField(max_length=255, blank=True)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RECEIVED)
    validation_report = models.JSONField(default=list, blank=True)
    is_current = models.BooleanField(default=False)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    replaced_at = models.DateTimeField(null=True, blank=True)
    # When grading last ended, well or not (RunQuerySet.judged reads it with the reason).
    graded_at = models.DateTimeField(null=True, blank=True)
    # Why grading last failed (the judge's first error), shown to the team and the
    # organisers; empty unless the run is FAILED (or QUEUED again since: a claim clears it).
    failure_reason = models.TextField(blank=True)
    # Whose fault the last grading failure was (FailureKind); read only while FAILED.
    failure_kind = models.CharField(max_length=8, choices=FailureKind.choices,
                                    default=FailureKind.PLATFORM)
    # An organiser took the run out of the leaderboards and the quota (RunAction says who,
    # when and why); restoring it puts it back. The run, its file and grades stay.
    withdrawn = models.BooleanField(default=False)
    questions = models.PositiveIntegerField(default=0, help_text="questions the run answers")
    records = models.PositiveIntegerField(default=0, help_text="passages or nuggets stored")

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["track", "name", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["track", "name"], condition=models.Q(is_current=True),
                name="run_one_current_version",
            ),
        ]
        indexes = [models.Index(fields=["track", "team", "is_current"])]

    def __str__(self) -> str:
        return self.name


class RunActionKind(models.TextChoices):
    """What an organiser did to a run (submissions.overrides)."""

    RERUN = "rerun", "Queued for grading again"
    WITHDRAW = "withdraw", "Withdrawn"
    RESTORE = "restore", "Restored"
    CHARGE = "charge", "Failure charged to the run (counts against the quota)"
    REFUND = "refund", "Failure refunded (does not count against the quota)"


class OrganiserAction(models.Model):
    """Who did it, when and why: the audit line every organisers' override keeps."""

    reason = models.TextField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                           related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["at", "pk"]


class RunAction(OrganiserAction):
    """One organiser's action on a run, with who, when and why: the run's team sees it."""

    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="actions")
    action = models.CharField(max_length=8, choices=RunActionKind.choices)

    def __str__(self) -> str:
        return f"{self.run.name}: {self.action}"


#: The most extra runs one grant may give (a typo of 1000 would open the floodgates).
MAX_GRANT = 100


class QuotaGrant(OrganiserAction):
    """Extra runs an organiser gave a team in a track, audited; the team's limit there is the
    track's `max_runs_per_team` plus all its grants."""

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="quota_grants")
    track = models.ForeignKey(Track, on_delete=models.PROTECT, related_name="quota_grants")
    extra_runs = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_GRANT)])

    def __str__(self) -> str:
        return f"{self.team.name} +{self.extra_runs} in {self.track.slug}"


class PassageRecord(models.Model):
    """A line of a PR run: [qID];[PassageRank];[docID];[PassageText]."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="passages")
    qid = models.CharField(max_length=64)
    rank = models.PositiveSmallIntegerField()
    doc_id = models.CharField(max_length=200)
    text = models.TextField()

    class Meta:
        ordering = ["run", "qid", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["run", "qid", "rank"], name="passage_rank_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.qid};{self.rank};{self.doc_id}"


class AnswerRecord(models.Model):
    """An answer block of an AC run: the answer and its 0-100 confidence."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answers")
    qid = models.CharField(max_length=64)
    answer = models.TextField()
    confidence = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["run", "qid"]
        constraints = [
            models.UniqueConstraint(fields=["run", "qid"], name="answer_qid_unique"),
        ]

    def __str__(self) -> str:
        return f"<{self.qid}> {self.answer};{self.confidence}"


class NuggetRecord(models.Model):
    """A nugget line of an AC run, citing a PassageKey (PRrunname, PassageRank)."""

    answer = models.ForeignKey(AnswerRecord, on_delete=models.CASCADE, related_name="nuggets")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="nuggets")
    qid = models.CharField(max_length=64)
    nugget_num = models.PositiveSmallIntegerField()
    pr_run_name = models.CharField(max_length=100)
    passage_rank = models.PositiveSmallIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["run", "qid", "nugget_num"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "nugget_num"], name="nugget_num_unique"),
        ]
        indexes = [models.Index(fields=["run", "qid"])]

    def __str__(self) -> str:
        return f"{self.nugget_num};{self.pr_run_name};{self.passage_rank};{self.text}"


class RankedPassageQuerySet(models.QuerySet["RankedPassage"]):
    def graded(self) -> RankedPassageQuerySet:
        """The passages grading rates, the one statement of the rule: a ranking run's top
        `track.depth` per query and every segment of a response run."""
        return self.filter(~models.Q(run__track__kind__in=kinds(ranked=True))
                           | models.Q(rank__lte=models.F("run__track__depth")))


class RankedPassage(models.Model):
    """A passage of a ranking run (place in trec_eval's order, text from the corpus) or a
    segment of a response run (its own text, no score); named by docid, unlike a PR run's
    `PassageRecord`, which AC nuggets cite by PassageKey."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="ranked_passages")
    qid = models.CharField(max_length=64)
    rank = models.PositiveIntegerField()
    docid = models.CharField(max_length=200)
    score = models.FloatField(null=True, blank=True)
    text = models.TextField(blank=True)

    objects = RankedPassageQuerySet.as_manager()

    class Meta:
        ordering = ["run", "qid", "rank"]
        constraints = [
            # Also the index behind "the top depth passages of each query".
            models.UniqueConstraint(fields=["run", "qid", "rank"],
                                    name="ranked_passage_rank_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.qid} {self.docid} {self.rank}"
