"""Campaigns, their phases and tracks, questions, gold answers, teams and memberships;
for RUBRIC campaigns also the corpus and the test bank."""

from __future__ import annotations

import hashlib
import zoneinfo
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from campaign.bank_limits import MAX_ITEM_ID_CHARS
from campaign.campaign_file import PHASE_KEYS, phases_out_of_order
from campaign.kinds import Kind, kind_of

# Defined once, in the judge's pure package: it imports no app, so campaign may import it
# (pyproject.toml, import-linter). Callers may import it from here too.
from campaign.vocabulary import AnswerCheck, PromptTarget, RubricAnswerCheck

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
    # The agreement with people that judgments accepted without review must reach, and
    # the risk that they do not (docs/agreement.md): set from a blind sample per kind.
    agreement_target = models.FloatField(
        default=0.9, help_text="Agreement with people that accepted judgments must reach.")
    agreement_risk = models.FloatField(
        default=0.1, help_text="Chance allowed that accepted judgments fall short of it.")
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
    RANKING = "ranking", "Ranking (TREC run)"
    RESPONSE = "response", "Generated response"


AC_ANSWER_CHECK_CHOICES = [
    (AnswerCheck.NUGGETS.value, "From the nuggets only"),
    (AnswerCheck.GOLD.value, "Against the gold answers"),
    (AnswerCheck.BOTH.value, "Nuggets and gold answers"),
]
RUBRIC_ANSWER_CHECK_CHOICES = [
    (RubricAnswerCheck.NONE.value, "The self-rated grade alone"),
    (RubricAnswerCheck.KEY.value, "Answer key, by edit distance (EXAM++)"),
    (RubricAnswerCheck.LLM.value, "Answer key, by the judge"),
]
ANSWER_CHECK_CHOICES = AC_ANSWER_CHECK_CHOICES + RUBRIC_ANSWER_CHECK_CHOICES
ANSWER_CHECK_FOR_KIND = (
    "answer_check '{value}' does not apply to a {kind} track (expected one of: {expected})"
)
RUBRIC_TRACK_NEEDS_DUE = "A ranking or response track has its own deadline."


class RubricLabel(models.TextChoices):
    """How Rubric-Qrels label a passage from its grades (docs/measures.md)."""

    MAX = "max", "Highest grade over the items"
    COUNT = "count", "Number of items at min_grade or above"


class Track(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="tracks")
    slug = models.SlugField(max_length=32)
    kind = models.CharField(max_length=8, choices=TrackKind.choices)
    max_runs_per_team = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1)]
    )
    answer_check = models.CharField(
        max_length=8, choices=ANSWER_CHECK_CHOICES, default=AnswerCheck.NUGGETS.value,
        help_text=(
            "AC tracks: what the judge checks answers against (nuggets, gold, both); "
            "ranking/response tracks: how an extracted answer is checked (none, key, llm)."
        ),
    )
    # An optional second judge whose labels are stored beside the official ones, only to
    # measure agreement (Cohen's kappa); it never changes the scores.
    # Not a URLField: service names without a dot (http://vllm:8000/v1) are normal here.
    second_judge_base_url = models.CharField(max_length=300, blank=True)
    second_judge_model = models.CharField(max_length=200, blank=True)
    # RUBRIC tracks (ranking, response) only.
    own_due = models.DateTimeField(
        null=True, blank=True,
        help_text="Ranking/response tracks: runs are due (PR/AC tracks use the campaign's).",
    )
    depth = models.PositiveSmallIntegerField(
        default=20, validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="Passages graded per query: the top `depth` of each run.",
    )
    min_grade = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(5)],
        help_text="An item counts as answered at this self-rated grade (0..5) or above.",
    )
    label = models.CharField(max_length=8, choices=RubricLabel.choices, default=RubricLabel.MAX)
    cover_k = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="The k of Rubric-Cover@k.",
    )
    significance_tests = models.JSONField(
        default=list, blank=True,
        help_text="Measures a randomised Tukey HSD tests besides the ranking measure.",
    )

    class Meta:
        ordering = ["campaign", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "slug"], name="track_slug_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.slug}"

    @property
    def kind_entry(self) -> Kind:
        """What the track's kind is and does (campaign.kinds)."""
        return kind_of(self.kind)

    @property
    def is_rubric(self) -> bool:
        """A RUBRIC track (ranking or response), as its kind's entry says."""
        return kind_of(self.kind).rubric

    def clean(self) -> None:
        choices = RUBRIC_ANSWER_CHECK_CHOICES if self.is_rubric else AC_ANSWER_CHECK_CHOICES
        allowed = [value for value, _ in choices]
        if kind_of(self.kind).graded and self.answer_check not in allowed:
            raise ValidationError({"answer_check": ANSWER_CHECK_FOR_KIND.format(
                value=self.answer_check, kind=self.kind, expected=", ".join(allowed))})
        if kind_of(self.kind).due == "own" and self.own_due is None:
            raise ValidationError({"own_due": RUBRIC_TRACK_NEEDS_DUE})

    def due(self) -> datetime:
        """The UTC deadline of this track: PR runs by pr_due, AC runs by ac_due,
        ranking/response runs by the track's own due."""
        due = kind_of(self.kind).due
        if due == "own" and self.own_due is not None:
            return self.own_due
        return self.campaign.pr_due if due == "pr_due" else self.campaign.ac_due


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


class CorpusPassage(models.Model):
    """A passage of a RUBRIC campaign's corpus, the text that ranking runs name by docid; a
    docid keeps its text once loaded, since runs and grades cite it."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="corpus")
    docid = models.CharField(max_length=200)
    text = models.TextField()

    class Meta:
        ordering = ["campaign", "docid"]
        constraints = [
            # Also the index behind every lookup by docid within a campaign.
            models.UniqueConstraint(fields=["campaign", "docid"], name="corpus_docid_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.docid}"


class BankItemStatus(models.TextChoices):
    DRAFT = "draft", "Draft (generated, not yet reviewed)"
    ACTIVE = "active", "Active"
    RETIRED = "retired", "Retired (kept in the history)"


def text_hash(text: str) -> str:
    """sha256 (hex) of an item text's UTF-8 bytes, as stored (`TestBankItem.text_hash`)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TestBankItemQuerySet(models.QuerySet["TestBankItem"]):
    def current(self) -> TestBankItemQuerySet:
        """The bank as grading, scoring and the pages use it: drafts and active items.
        Retired items stay in the database (and their history) but count nowhere."""
        return self.exclude(status=BankItemStatus.RETIRED)


class TestBankItem(models.Model):
    """An exam question or nugget of a query's test bank (secret). `item_id` stays through
    edits; `text_hash` changes with the text, so grades of an old text are never reused;
    `answers` (a question's answer key) is not hashed (docs/rubric.md, "The test bank")."""

    __test__ = False  # a model, not a pytest class

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="test_bank")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="bank_items")
    item_id = models.CharField(max_length=MAX_ITEM_ID_CHARS)
    target = models.CharField(max_length=16, choices=[(t.value, t.value) for t in PromptTarget])
    text = models.TextField()
    text_hash = models.CharField(max_length=64, editable=False)
    answers = models.JSONField(default=list, blank=True)
    status = models.CharField(
        max_length=8, choices=BankItemStatus.choices, default=BankItemStatus.ACTIVE
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="+", help_text="Empty: loaded from the campaign file or generated.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TestBankItemQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "question__position", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item_id"], name="bank_item_id_unique"),
        ]

    def __str__(self) -> str:
        return self.item_id

    def clean(self) -> None:
        if self.question_id is not None and self.question.campaign_id != self.campaign_id:
            raise ValidationError({"question": "The question belongs to another campaign."})
        if self.answers and self.target != PromptTarget.QUESTIONS:
            raise ValidationError({"answers": "Only questions have an answer key."})


class BankEditAction(models.TextChoices):
    ADD = "add", "Added"
    EDIT = "edit", "Edited"
    RETIRE = "retire", "Retired"


class TestBankEdit(models.Model):
    """One change to a test-bank item: who, when, why, and what it said before."""

    __test__ = False

    item = models.ForeignKey(TestBankItem, on_delete=models.CASCADE, related_name="edits")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="+", help_text="Empty: the campaign file or the judge made the change.",
    )
    at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=8, choices=BankEditAction.choices)
    note = models.TextField(blank=True)
    previous_text = models.TextField(blank=True)
    previous_answers = models.JSONField(default=list, blank=True)
    previous_status = models.CharField(max_length=8, blank=True)
    text = models.TextField(blank=True, help_text="The text after the change.")
    answers = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["item", "at", "id"]

    def __str__(self) -> str:
        return f"{self.action} {self.item_id} at {self.at:%Y-%m-%d %H:%M}"
