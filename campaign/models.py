"""Campaigns, their phases and tracks, questions, gold answers, teams and memberships."""

from __future__ import annotations

import zoneinfo
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from campaign.campaign_file import PHASE_KEYS, phases_out_of_order

# Defined once, in the judge's pure package: it imports no app, so campaign may import it
# (pyproject.toml, import-linter). Callers may import it from here too.
from grading.llm.prompts import AnswerCheck

TEAM_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
TEAM_NAME_HELP = "letters, digits, '_' and '-', starting with a letter or digit, at most 64"
QID_PATTERN = r"^[^\s;]{1,64}$"


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"'{value}' is not an IANA time zone (e.g. Asia/Tokyo).")


class Campaign(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    timezone = models.CharField(
        max_length=64, default="UTC", validators=[validate_time_zone],
        help_text="Deadlines are enforced in UTC and shown in this zone.",
    )
    # Phases, all timezone-aware (stored in UTC).
    topics_release = models.DateTimeField(help_text="Questions become visible to participants.")
    pr_due = models.DateTimeField(help_text="PR runs are due; afterwards they are shared.")
    ac_due = models.DateTimeField(help_text="AC runs are due.")
    results_release = models.DateTimeField(
        null=True, blank=True, help_text="Published leaderboards become public."
    )
    teams_see_own_scores = models.BooleanField(
        default=False,
        help_text="Before publication, each team sees its own runs' latest scores.",
    )
    review_below = models.FloatField(
        default=0.8,
        help_text="Judgments the judge was less sure of need an organiser before publishing.",
    )
    # {"entailment_accuracy": 0.95, ...}: grading waits for a judge validation that
    # reaches each (grading/validation/gate.py); empty: no validation is required.
    judge_thresholds = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-topics_release", "slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        phases = {key: getattr(self, key) for key in PHASE_KEYS}
        problems = {
            later: f"{later} must not be before {earlier}."
            for earlier, _, later, _ in phases_out_of_order(phases)
        }
        if problems:
            raise ValidationError(problems)

    def topics_released(self, now: datetime) -> bool:
        return now >= self.topics_release

    def results_released(self, now: datetime) -> bool:
        return self.results_release is not None and now >= self.results_release


class TrackKind(models.TextChoices):
    PR = "pr", "Passage retrieval (PR)"
    AC = "ac", "Answer with confidence (AC)"


ANSWER_CHECK_CHOICES = [
    (AnswerCheck.NUGGETS.value, "From the nuggets only"),
    (AnswerCheck.GOLD.value, "Against the gold answers"),
    (AnswerCheck.BOTH.value, "Nuggets and gold answers"),
]


class Track(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="tracks")
    slug = models.SlugField(max_length=32)
    kind = models.CharField(max_length=2, choices=TrackKind.choices)
    max_runs_per_team = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1)]
    )
    answer_check = models.CharField(
        max_length=8, choices=ANSWER_CHECK_CHOICES, default=AnswerCheck.NUGGETS.value,
        help_text="AC tracks: what the judge checks answers against.",
    )
    # An optional second judge whose labels are stored beside the official ones, only to
    # measure agreement (Cohen's kappa); it never changes the scores.
    # Not a URLField: service names without a dot (http://vllm:8000/v1) are normal here.
    second_judge_base_url = models.CharField(max_length=300, blank=True)
    second_judge_model = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["campaign", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "slug"], name="track_slug_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.slug}"

    def due(self) -> datetime:
        """The UTC deadline of this track: PR runs by pr_due, AC runs by ac_due."""
        return self.campaign.pr_due if self.kind == TrackKind.PR else self.campaign.ac_due


class Question(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="questions")
    qid = models.CharField(max_length=64, validators=[RegexValidator(QID_PATTERN)])
    text = models.TextField()
    category = models.CharField(max_length=64, blank=True)
    position = models.PositiveIntegerField(default=0, help_text="Order in the questions file.")

    class Meta:
        ordering = ["campaign", "position", "qid"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "qid"], name="question_qid_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.qid}"


class GoldAnswer(models.Model):
    """A secret acceptable answer; never shown to participants."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="gold_answers")
    text = models.TextField()
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["question", "position"]

    def __str__(self) -> str:
        return self.text


class Team(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(
        max_length=64, validators=[RegexValidator(TEAM_NAME_PATTERN, TEAM_NAME_HELP)],
        help_text="Run names start with it: [Team]-AC-1.",
    )

    class Meta:
        ordering = ["campaign", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="team_name_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.name}"


class Role(models.TextChoices):
    ORGANISER = "organiser", "Organiser"
    PARTICIPANT = "participant", "Participant"


class Membership(models.Model):
    """A user's role in one campaign: organiser, or participant in one team."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, null=True, blank=True, related_name="memberships"
    )

    class Meta:
        ordering = ["campaign", "role", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user"], name="membership_unique"),
            models.CheckConstraint(
                condition=(
                    models.Q(role="organiser", team__isnull=True)
                    | models.Q(role="participant", team__isnull=False)
                ),
                name="membership_team_matches_role",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.campaign}"

    def clean(self) -> None:
        if self.role == Role.PARTICIPANT and self.team_id is None:
            raise ValidationError({"team": "A participant belongs to a team."})
        if self.role == Role.ORGANISER and self.team_id is not None:
            raise ValidationError({"team": "Organisers do not belong to a team."})
        if self.team is not None and self.team.campaign_id != self.campaign_id:
            raise ValidationError({"team": "The team belongs to another campaign."})
