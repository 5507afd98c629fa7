"""Judgments: one row per distinct judge input, with provenance and an audit trail, and the
links that say where each is used (docs/judging.md, "Judgments: kept, shared and post-edited")."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from campaign.models import Campaign, TestBankItem
from submissions.models import AnswerRecord, NuggetRecord, Run


class JudgmentKind(models.TextChoices):
    ENTAILMENT = "entailment", "Bogus nugget identification (entailment)"
    ANSWER = "answer", "Answer evaluation with relevant nuggets"
    RUBRIC = "rubric", "Self-rated grade of a passage on a test-bank item"


class JudgmentStatus(models.TextChoices):
    DONE = "done", "Done"
    NEEDS_REVIEW = "needs_review", "Needs review"  # the judge's reply never parsed
    REVIEWED = "reviewed", "Reviewed"  # edited or confirmed by an organiser


class JudgeSlot(models.TextChoices):
    OFFICIAL = "official", "Official judge"
    SECOND = "second", "Second judge (for agreement only)"


class Judgment(models.Model):
    # Judgments are shared within a campaign, whose organisers may edit them.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judgments")
    kind = models.CharField(max_length=16, choices=JudgmentKind.choices)
    judge_model = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=64)
    input_hash = models.CharField(max_length=64)
    # What the judge saw, for the review pages: passage+nugget, or question+answer+nuggets.
    input = models.JSONField()
    status = models.CharField(max_length=16, choices=JudgmentStatus.choices)
    # The judge's own verdict: {"entailed": bool} or {"correct": bool, "relevant": [int]}.
    llm_label = models.JSONField(null=True, blank=True)
    llm_reason = models.TextField(blank=True)
    nugget_reasons = models.JSONField(default=dict, blank=True)
    raw_output = models.TextField(blank=True)
    decoding = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_seconds = models.FloatField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    # The judge's own probability for its label (from token logprobs; 1.0 where a rule
    # decided), the least sure of its steps: what the review queue sorts by.
    confidence = models.FloatField(null=True, blank=True)
    # The same through the judge's calibration (grading.validation.calibration): the share
    # of such labels people agreed with on a labelled set. The doubt threshold compares
    # this one where it exists. Null: no calibration fitted for the judge's wording.
    calibrated_confidence = models.FloatField(null=True, blank=True)
    # Each subtask's decision: which rule or call made it, its verdict, its probability.
    steps = models.JSONField(default=list, blank=True)
    judged_at = models.DateTimeField(auto_now_add=True)
    # An organiser's post-edit wins over the LLM's label (history in JudgmentEdit).
    edited_label = models.JSONField(null=True, blank=True)
    edited_reason = models.TextField(blank=True)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    edited_at = models.DateTimeField(null=True, blank=True)
    # The edit is the second judge's, not a person's: the agreement guarantee let it
    # decide a judgment the official judge was too unsure of (grading.agreement.cascade).
    decided_by_second_judge = models.BooleanField(default=False)

    class Meta:
        ordering = ["kind", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "kind", "judge_model", "prompt_version", "input_hash"],
                name="judgment_once_per_input",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.input_hash[:12]} ({self.judge_model})"

    @property
    def edited(self) -> bool:
        return self.edited_label is not None

    @property
    def label(self) -> dict[str, Any] | None:
        """The label that counts: the organiser's edit if any, else the LLM's."""
        label: dict[str, Any] | None = self.edited_label if self.edited else self.llm_label
        return label

    @property
    def reason(self) -> str:
        return self.edited_reason if self.edited else self.llm_reason


class JudgmentEdit(models.Model):
    """The audit trail: who changed which label, when, why, and from what."""

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="edits")
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField()
    previous_label = models.JSONField(null=True)
    previous_reason = models.TextField(blank=True)
    new_label = models.JSONField()
    new_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["judgment", "edited_at", "id"]

    def __str__(self) -> str:
        return f"edit of judgment {self.judgment_id} at {self.edited_at:%Y-%m-%d %H:%M}"


class BlindSample(models.Model):
    """A seeded uniform draw of one kind of judgment, for people to label without seeing
    the judge's label: what the agreement report and the guarantee are computed from."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="blind_samples")
    kind = models.CharField(max_length=16, choices=JudgmentKind.choices)
    seed = models.BigIntegerField()
    # How many judgments it was drawn from: the kind's official ones not sampled before.
    population = models.PositiveIntegerField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "kind", "id"]

    def __str__(self) -> str:
        return f"blind sample {self.pk} of {self.kind} judgments (seed {self.seed})"


class BlindItem(models.Model):
    """One sampled judgment and, once given, the person's label for it."""

    sample = models.ForeignKey(BlindSample, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT,
                                 related_name="blind_items")
    label = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    labelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    labelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["sample", "position"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "position"], name="one_item_per_place"),
            models.UniqueConstraint(fields=["sample", "judgment"],
                                    name="judgment_once_per_sample"),
        ]

    def __str__(self) -> str:
        return f"item {self.position} of blind sample {self.sample_id}"

    @property
    def labelled(self) -> bool:
        return self.label is not None


class NuggetEntailment(models.Model):
    """Which entailment judgment decides whether a nugget record is bogus."""

    nugget = models.ForeignKey(NuggetRecord, on_delete=models.CASCADE, related_name="entailments")
    slot = models.CharField(max_length=16, choices=JudgeSlot.choices, default=JudgeSlot.OFFICIAL)
    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, related_name="nugget_links")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["nugget", "slot"], name="one_entailment_per_slot"),
        ]

    def __str__(self) -> str:
        return f"nugget {self.nugget_id} -> {self.judgment_id}"


class AnswerEvaluation(models.Model):
    """Which answer judgment decides an answer's correctness and relevant nuggets."""

    answer = models.ForeignKey(AnswerRecord, on_delete=models.CASCADE, related_name="evaluations")
    slot = models.CharField(max_length=16, choices=JudgeSlot.choices, default=JudgeSlot.OFFICIAL)
    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, related_name="answer_links")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "slot"], name="one_evaluation_per_slot"),
        ]

    def __str__(self) -> str:
        return f"answer {self.answer_id} -> {self.judgment_id}"


class PassageItemGrade(models.Model):
    """Which rubric judgment grades a passage on a test-bank item: one row per (item, docid),
    shared by every run that retrieved the passage; stale once the item's text hash differs."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="passage_grades")
    qid = models.CharField(max_length=64)
    docid = models.CharField(max_length=200)
    item = models.ForeignKey(TestBankItem, on_delete=models.CASCADE, related_name="grades")
    item_text_hash = models.CharField(max_length=64)
    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, related_name="grade_links")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "docid"], name="one_grade_per_passage_item"),
        ]
        indexes = [models.Index(fields=["campaign", "qid"], name="passage_grade_query")]

    def __str__(self) -> str:
        return f"{self.qid}/{self.docid} on {self.item_id} -> {self.judgment_id}"


class PartStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    GRADING = "grading", "Being graded"
    GRADED = "graded", "Graded"
    FAILED = "failed", "Failed"


class GradingJob(models.Model):
    """A run's current round of grading: its parts are the leases workers take; asking for
    grading again replaces it, which stops the old round's graders (docs/operations.md)."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="grading_job")
    # Which round this is: a new one on every request; empty once a part failed, which ends it.
    round = models.CharField(max_length=64, blank=True)
    # The round's last sign of life: when it was queued, then every part's beat. Every write
    # under a claim updates this row first: one lock order, and the parts' finishes take turns.
    heartbeat = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"grading of run {self.run_id}"


class GradingPart(models.Model):
    """Work one task takes under the claim `token`: the whole run, or some whole questions of
    a large AC run (`qids`), graded by any workers at once (docs/operations.md)."""

    job = models.ForeignKey(GradingJob, on_delete=models.CASCADE, related_name="parts")
    number = models.PositiveIntegerField()
    qids = models.JSONField(null=True, blank=True, help_text="None: the whole run")
    nuggets = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=PartStatus.choices,
                              default=PartStatus.QUEUED)
    token = models.CharField(max_length=64, blank=True)
    # The claim's beat while GRADING; when it was queued while QUEUED (the reaper reads it).
    heartbeat = models.DateTimeField()
    # How many times the reaper (grading.work.reaper) queued it again after its worker went
    # silent or its task was lost; past GRADING_MAX_REQUEUES the part and its run are FAILED.
    requeues = models.PositiveSmallIntegerField(default=0)
    # The worker that graded it (its Celery hostname), for the operators.
    graded_by = models.CharField(max_length=200, blank=True)
    judge_calls = models.PositiveIntegerField(default=0)
    needs_review = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["job", "number"]
        constraints = [
            models.UniqueConstraint(fields=["job", "number"], name="one_part_number_per_job"),
        ]

    def __str__(self) -> str:
        return f"part {self.number} of run grading {self.job_id} ({self.status})"


class WorkerHeartbeat(models.Model):
    """A Celery worker's last sign of life, written by its main process every
    WORKER_HEARTBEAT_SECONDS, for the stall list and the reaper (docs/operations.md)."""

    hostname = models.CharField(max_length=200, unique=True)
    queues = models.CharField(max_length=500, blank=True, help_text="comma-separated")
    started_at = models.DateTimeField()
    last_beat = models.DateTimeField()
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} (last beat {self.last_beat:%Y-%m-%d %H:%M:%S})"

    @property
    def queue_names(self) -> list[str]:
        return [name for name in self.queues.split(",") if name]


class JudgeValidation(models.Model):
    """One run of a judge over a labelled set (`judge_eval`), kept with what makes it reproducible,
    its figures per pass and every item's labels (docs/judging.md, "Validating the judge")."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE,
                                 related_name="judge_validations")
    judge = models.CharField(max_length=32, help_text="official, second, or a packaged model")
    judge_model = models.CharField(max_length=200)
    prompt_versions = models.JSONField(default=dict)
    set_name = models.CharField(max_length=200)
    set_sha256 = models.CharField(max_length=64)
    figures = models.JSONField(default=dict)
    outcomes = models.JSONField(default=list)
    # Per subtask step, the map from raw confidence to agreement fitted on this set
    # (JudgeCalibration.as_json); grading uses the latest one for this judge.
    calibration = models.JSONField(default=dict, blank=True)
    # Against the campaign's thresholds when it was made (empty when none are set).
    failures = models.JSONField(default=list)
    passed = models.BooleanField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "failed"
        return f"{self.judge_model} on {self.set_name}: {verdict}"
