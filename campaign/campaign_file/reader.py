"""The campaign file as a whole: its YAML read, its top-level keys checked (each part by its
own section), the files it names read, and the CampaignSpec made of it all."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from rest_framework.exceptions import ValidationError

from campaign.campaign_file.fields import (
    BAD_SLUG,
    SLUG_RE,
    DataFile,
    Matching,
    Probability,
    Text,
    TimeZone,
    Usernames,
)
from campaign.campaign_file.phases import Phases
from campaign.campaign_file.problems import (
    NO_SUCH_FILE,
    NOT_UTF8,
    YAML_SYNTAX,
    CampaignFileError,
    Refused,
    problems_in,
    whole,
)
from campaign.campaign_file.questions import QuestionSpec, read_questions
from campaign.campaign_file.rubric_files import corpus_problems, read_test_bank
from campaign.campaign_file.sections import Section
from campaign.campaign_file.teams import Teams, TeamSpec, team_problems
from campaign.campaign_file.tracks import Tracks, TrackSpec, names_r2c2_tracks
from campaign.kinds import kind_of
from submissions.formats.test_bank import QueryBank

TRACK_DUE_ORDER = "{file}: {key} ({due}) is {relation} phases.{phase} ({at})"

# judge_thresholds: each key names a pass of the judge's validation and a figure of it
# (grading/validation/runner.py), which grading.validation.gate checks before `grade`.
# Kept here, with the rest of the file's keys, because campaign knows no other app.
JUDGE_THRESHOLDS: dict[str, tuple[str, str]] = {
    "entailment_accuracy": ("entailment", "accuracy"),
    "entailment_kappa": ("entailment", "kappa"),
    "bogus_recall": ("entailment", "bogus_recall"),
    "answer_gold_accuracy": ("answer_gold", "accuracy"),
    "answer_gold_exact_relevant_set": ("answer_gold", "exact_relevant_set"),
    "answer_nuggets_accuracy": ("answer_nuggets", "accuracy"),
    "answer_nuggets_exact_relevant_set": ("answer_nuggets", "exact_relevant_set"),
}


@dataclass(frozen=True)
class CampaignSpec:
    slug: str
    title: str
    description: str
    timezone: str
    phases: dict[str, datetime | None]
    tracks: tuple[TrackSpec, ...]
    questions: tuple[QuestionSpec, ...]
    organisers: tuple[str, ...]
    teams: tuple[TeamSpec, ...]
    # Judgments the judge was less sure of than this need an organiser before publishing.
    review_below: float = 0.8
    # What judgments accepted without review must reach against people, and at what risk.
    agreement_target: float = 0.9
    agreement_risk: float = 0.1
    judge_thresholds: dict[str, float] = field(default_factory=dict)
    # RUBRIC campaigns: the corpus is streamed by the loader, so
    # only its path is here; the test bank is small and parsed whole.
    corpus: Path | None = None
    test_bank: tuple[QueryBank, ...] = ()
    test_bank_file: Path | None = None

    @property
    def has_r2c2_tracks(self) -> bool:
        return any(not kind_of(track.kind).rubric for track in self.tracks)


class Thresholds(Section):
    """judge_thresholds: {figure: a number from 0 to 1}, figures from JUDGE_THRESHOLDS."""

    def get_fields(self) -> dict[str, Any]:
        return {key: Probability(null_is_missing=False, required=False)
                for key in JUDGE_THRESHOLDS}


class CampaignFile(Section):
    """The top-level keys, in the order problems are told; the checks across them read the
    question and test-bank files, whose lines are checked against the questions and tracks."""

    expected = "a mapping of campaign settings"
    slug = Matching(SLUG_RE, BAD_SLUG)
    title = Text()
    description = Text(default="")
    timezone = TimeZone(allow_blank=False, default="UTC")
    phases = Phases()
    tracks = Tracks()
    questions = DataFile()
    categories = DataFile(default=None)
    gold_answers = DataFile(default=None)
    organisers = Usernames(default=())
    teams = Teams(default=())
    review_below = Probability(null_is_missing=False, required=False)
    judge_thresholds = Thresholds(required=False)
    agreement_target = Probability(null_is_missing=False, required=False)
    agreement_risk = Probability(null_is_missing=False, required=False)
    corpus = DataFile(null_is_missing=False, required=False)
    test_bank = DataFile(null_is_missing=False, required=False)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        # pr_due and ac_due are required while a track is pr or ac (or the tracks unreadable).
        fields["phases"] = Phases(r2c2_dues=names_r2c2_tracks(self.initial_data))
        return fields

    def check(self, values: dict[str, Any]) -> dict[str | None, list[Any]]:
        """Also puts what the question and test-bank files hold in `values`, in place of
        their paths."""
        file: Path = self.context["file"]
        tracks = values.get("tracks", ())
        told: dict[str | None, list[Any]] = {
            "tracks": whole(_due_problems(file, tracks, values.get("phases", {})))}
        named: dict[str, Any] = {key: values.pop(key) for key in ("categories", "gold_answers")
                                 if key in values}
        if "questions" in values:
            gold_named = self.initial_data.get("gold_answers")
            values["questions"], by_file = read_questions(
                file, {**named, "questions": values["questions"]}, gold_named,
                [track for track in tracks if track is not None])
            told |= {key: whole(messages) for key, messages in by_file.items()}
        if "test_bank" in values:
            values["test_bank_file"] = values["test_bank"]
            qids = {question.qid for question in values.get("questions", ())}
            values["test_bank"], problems = read_test_bank(values["test_bank_file"], qids)
            told["test_bank"] = whole(problems)
        told["teams"] = team_problems(values.get("teams", ()), values.get("organisers", ()))
        return told


def read_campaign_file(file: Path) -> CampaignSpec:
    """Parse and check a campaign YAML file and the files it names; CampaignFileError lists
    every problem."""
    doc = _load_yaml(file)
    try:
        # Not `is_valid()`: a file of no mapping at all is a problem of the file, not a key.
        values = CampaignFile(data=doc, context={"file": file}).to_internal_value(doc)
    except ValidationError as exc:
        problems = problems_in(exc.detail, file)
        corpus = exc.partial.get("corpus") if isinstance(exc, Refused) and exc.partial else None
        if corpus is not None:
            # The loader reads a good file's corpus once, as it stores it; a file refused
            # anyway gets its corpus's problems in the same report.
            problems += corpus_problems(corpus)
        raise CampaignFileError(problems) from None
    return CampaignSpec(**values)


def _due_problems(file: Path, tracks: tuple[TrackSpec | None, ...],
                  phases: dict[str, datetime | None]) -> list[str]:
    """A ranking/response track is due after the topics are out and before results."""
    topics, results = phases.get("topics_release"), phases.get("results_release")
    problems = []
    for index, track in enumerate(tracks):
        due = track.due if track is not None else None
        if due is None:
            continue
        if topics is not None and due < topics:
            problems.append(TRACK_DUE_ORDER.format(
                file=file, key=f"tracks[{index}].due", due=due.isoformat(), relation="before",
                phase="topics_release", at=topics.isoformat()))
        if results is not None and due > results:
            problems.append(TRACK_DUE_ORDER.format(
                file=file, key=f"tracks[{index}].due", due=due.isoformat(), relation="after",
                phase="results_release", at=results.isoformat()))
    return problems


class _NoTimestampLoader(yaml.SafeLoader):
    """SafeLoader that leaves dates as strings, so we parse (and reject) them ourselves."""


_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load_yaml(file: Path) -> Any:
    if not file.is_file():
        raise CampaignFileError([NO_SUCH_FILE.format(file=file)])
    try:
        return yaml.load(file.read_text(encoding="utf-8-sig"), Loader=_NoTimestampLoader)
    except UnicodeDecodeError as exc:
        raise CampaignFileError([NOT_UTF8.format(file=file, problem=exc.reason)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else "?"
        problem = getattr(exc, "problem", None) or str(exc)
        raise CampaignFileError([YAML_SYNTAX.format(file=file, line=line, problem=problem)]
                                ) from None
