"""Reading a campaign description (YAML, docs/campaign-file.md) and the files it names into
a CampaignSpec, without the database; every problem is collected and reported at once."""

from __future__ import annotations

import itertools
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from campaign.campaign_file.common import (
    BAD_DATE,
    BAD_PROBABILITY,
    BAD_SLUG,
    BAD_TEAM_NAME,
    BAD_TIMEZONE,
    BAD_USERNAME,
    DUPLICATE_QID,
    DUPLICATE_TEAM,
    LINE_BAD_QID,
    LINE_MALFORMED,
    MISSING_KEY,
    NO_QUESTIONS,
    NO_SUCH_FILE,
    NOT_A_MAPPING,
    NOT_UTF8,
    ORGANISER_IN_TEAM,
    PHASE_ORDER,
    QID_RE,
    SLUG_RE,
    TEAM_NAME_RE,
    UNKNOWN_QID,
    USER_IN_TWO_TEAMS,
    USERNAME_RE,
    WRONG_TYPE,
    YAML_SYNTAX,
    CampaignFileError,
    _Reader,
    _type_name,
)
from campaign.campaign_file.rubric_files import corpus_problems, data_file_path, read_test_bank
from campaign.campaign_file.tracks import (
    R2C2_KINDS,
    RUBRIC_KINDS,
    TRACK_KINDS,
    TrackSpec,
    read_tracks,
)
from submissions.formats.test_bank import QueryBank

__all__ = [
    "BAD_DATE", "GOLD_ANSWER_MISSING", "JUDGE_THRESHOLDS", "PHASE_KEYS", "TRACK_KINDS",
    "CampaignFileError", "CampaignSpec", "QuestionSpec", "TeamSpec", "TrackSpec",
    "phases_out_of_order", "read_campaign_file",
]

TRACK_DUE_ORDER = "{file}: {key} ({due}) is {relation} phases.{phase} ({at})"
# A gold check without a gold answer has nothing to compare with: refused here, not
# found out by the judge.
GOLD_ANSWER_MISSING = (
    "{file}: question {qid} has no gold answer, but track {track} checks answers against "
    "the gold answers (answer_check: {check}); expected a '{qid};[answer]' line in {gold}"
)
NO_GOLD_FILE = "a gold_answers file (the campaign file names none)"
# The AC tracks' answer_check values that read the gold answers (grading.llm.prompts).
GOLD_CHECKS = ("gold", "both")

TOP_KEYS = (
    "slug", "title", "description", "timezone", "phases", "tracks", "questions",
    "categories", "gold_answers", "organisers", "teams", "review_below", "judge_thresholds",
    "agreement_target", "agreement_risk",
    "corpus", "test_bank",
)
REQUIRED_TOP_KEYS = ("slug", "title", "phases", "tracks", "questions")
PHASE_KEYS = ("topics_release", "pr_due", "ac_due", "results_release")
# pr_due and ac_due are required while the campaign has a pr or ac track (or its tracks
# cannot be read): a campaign of ranking/response tracks only has each track's own due.
REQUIRED_PHASE_KEYS = ("topics_release", "pr_due", "ac_due")
R2C2_PHASE_KEYS = ("pr_due", "ac_due")
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
TEAM_KEYS = ("name", "members")


@dataclass(frozen=True)
class QuestionSpec:
    qid: str
    text: str
    category: str = ""
    gold_answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class TeamSpec:
    name: str
    members: tuple[str, ...]


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
        return any(track.kind in R2C2_KINDS for track in self.tracks)


class _NoTimestampLoader(yaml.SafeLoader):
    """SafeLoader that leaves dates as strings, so we parse (and reject) them ourselves."""


_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def phases_out_of_order(
    phases: dict[str, datetime | None],
) -> list[tuple[str, datetime, str, datetime]]:
    """Pairs of set phases (in PHASE_KEYS order) where the later one comes first."""
    known = [(key, phases[key]) for key in PHASE_KEYS if phases.get(key) is not None]
    return [
        (earlier, a, later, b)
        for (earlier, a), (later, b) in itertools.pairwise(known)
        if a is not None and b is not None and a > b
    ]


def _split_id_line(
    reader: _Reader, path: Path, number: int, line: str, expected: str
) -> tuple[str, str] | None:
    qid, sep, rest = line.partition(";")
    qid, rest = qid.strip(), rest.strip()
    if not sep or not qid or not rest:
        reader.problems.append(
            LINE_MALFORMED.format(path=path, line=number, expected=expected, found=line)
        )
        return None
    if not QID_RE.match(qid):
        reader.problems.append(LINE_BAD_QID.format(path=path, line=number, qid=qid))
        return None
    return qid, rest


def _read_questions(
    reader: _Reader, doc: dict[str, Any], tracks: tuple[TrackSpec, ...]
) -> tuple[QuestionSpec, ...]:
    loaded = reader.data_lines("questions", doc["questions"])
    if loaded is None:
        return ()
    path, lines = loaded
    if not lines:
        reader.problems.append(NO_QUESTIONS.format(path=path))
    texts: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, line in lines:
        parsed = _split_id_line(reader, path, number, line, "[qID];[Question]")
        if parsed is None:
            continue
        qid, text = parsed
        if qid in first_line:
            reader.problems.append(
                DUPLICATE_QID.format(path=path, line=number, qid=qid, first=first_line[qid])
            )
            continue
        first_line[qid] = number
        texts[qid] = text

    categories = _read_keyed_lines(reader, doc, "categories", "[qID];[category]", path, texts)
    golds = _read_keyed_lines(reader, doc, "gold_answers", "[qID];[answer]", path, texts)
    if golds is not None:
        _check_gold_answers(reader, doc, tracks, texts, golds)
    return tuple(
        QuestionSpec(
            qid=qid,
            text=text,
            category=(categories or {}).get(qid, ("",))[-1],
            gold_answers=tuple((golds or {}).get(qid, ())),
        )
        for qid, text in texts.items()
    )


def _check_gold_answers(
    reader: _Reader, doc: dict[str, Any], tracks: tuple[TrackSpec, ...],
    texts: dict[str, str], golds: dict[str, list[str]],
) -> None:
    """Every question has a gold answer where an AC track checks answers against them;
    each question without one is named (the first such track says why)."""
    checking = [track for track in tracks if track.answer_check in GOLD_CHECKS]
    if not checking:
        return
    track = checking[0]
    gold = doc.get("gold_answers") or NO_GOLD_FILE
    for qid in texts:
        if not golds.get(qid):
            reader.add(GOLD_ANSWER_MISSING, qid=qid, track=track.slug,
                       check=track.answer_check, gold=gold)


def _read_keyed_lines(
    reader: _Reader,
    doc: dict[str, Any],
    key: str,
    expected: str,
    questions_path: Path,
    texts: dict[str, str],
) -> dict[str, list[str]] | None:
    """Lines ``[qID];[value]`` of an optional file, several per qID allowed; None where the
    file is named but cannot be read (a problem says why)."""
    if doc.get(key) is None:
        return {}
    loaded = reader.data_lines(key, doc[key])
    if loaded is None:
        return None
    path, lines = loaded
    values: dict[str, list[str]] = {}
    for number, line in lines:
        parsed = _split_id_line(reader, path, number, line, expected)
        if parsed is None:
            continue
        qid, value = parsed
        if qid not in texts:
            reader.problems.append(
                UNKNOWN_QID.format(path=path, line=number, qid=qid, questions=questions_path.name)
            )
            continue
        values.setdefault(qid, []).append(value)
    return values


def _read_phases(
    reader: _Reader, value: Any, *, r2c2_dues_required: bool
) -> dict[str, datetime | None]:
    if not isinstance(value, dict):
        reader.add(WRONG_TYPE, key="phases", expected="a mapping", found=_type_name(value))
        return {}
    reader.check_keys(value, PHASE_KEYS, "phases.")
    phases: dict[str, datetime | None] = {}
    for key in PHASE_KEYS:
        if value.get(key) is None:
            if key in REQUIRED_PHASE_KEYS and (r2c2_dues_required or key not in R2C2_PHASE_KEYS):
                reader.add(MISSING_KEY, key=f"phases.{key}")
            phases[key] = None
            continue
        phases[key] = reader.date(value[key], f"phases.{key}")
    for earlier, a, later, b in phases_out_of_order(phases):
        reader.add(PHASE_ORDER, earlier=earlier, later=later, a=a.isoformat(), b=b.isoformat())
    return phases


def _read_usernames(reader: _Reader, value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reader.add(WRONG_TYPE, key=key, expected="a list of usernames", found=_type_name(value))
        return ()
    names: list[str] = []
    for name in value:
        if not isinstance(name, str) or not USERNAME_RE.match(name):
            reader.add(BAD_USERNAME, key=key, value=name)
        elif name not in names:
            names.append(name)
    return tuple(names)


def _read_teams(reader: _Reader, value: Any, organisers: tuple[str, ...]) -> tuple[TeamSpec, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reader.add(WRONG_TYPE, key="teams", expected="a list of teams", found=_type_name(value))
        return ()
    teams: list[TeamSpec] = []
    team_of: dict[str, str] = {}
    for index, item in enumerate(value):
        where = f"teams[{index}]"
        if not isinstance(item, dict):
            reader.add(WRONG_TYPE, key=where, expected="a mapping", found=_type_name(item))
            continue
        reader.check_keys(item, TEAM_KEYS, f"{where}.")
        name = reader.text(item, "name", f"{where}.")
        if name is None:
            if item.get("name") is None:
                reader.add(MISSING_KEY, key=f"{where}.name")
            continue
        if not TEAM_NAME_RE.match(name):
            reader.add(BAD_TEAM_NAME, key=f"{where}.name", value=name)
            continue
        if any(team.name == name for team in teams):
            reader.add(DUPLICATE_TEAM, name=name)
            continue
        members = _read_usernames(reader, item.get("members"), f"{where}.members")
        for user in members:
            if user in organisers:
                reader.add(ORGANISER_IN_TEAM, user=user, team=name)
            elif user in team_of:
                reader.add(USER_IN_TWO_TEAMS, user=user, first=team_of[user], second=name)
            else:
                team_of[user] = name
        teams.append(TeamSpec(name=name, members=members))
    return tuple(teams)


def read_campaign_file(file: Path) -> CampaignSpec:
    """Parse and check a campaign YAML file and the files it names; CampaignFileError lists
    every problem."""
    reader = _Reader(file=file)
    if not file.is_file():
        raise CampaignFileError([NO_SUCH_FILE.format(file=file)])
    try:
        doc = yaml.load(file.read_text(encoding="utf-8-sig"), Loader=_NoTimestampLoader)
    except UnicodeDecodeError as exc:
        raise CampaignFileError([NOT_UTF8.format(file=file, problem=exc.reason)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else "?"
        problem = getattr(exc, "problem", None) or str(exc)
        message = YAML_SYNTAX.format(file=file, line=line, problem=problem)
        raise CampaignFileError([message]) from None
    if not isinstance(doc, dict):
        raise CampaignFileError([NOT_A_MAPPING.format(file=file, found=_type_name(doc))])

    reader.check_keys(doc, TOP_KEYS, "")
    for key in REQUIRED_TOP_KEYS:
        if doc.get(key) is None:
            reader.add(MISSING_KEY, key=key)
    slug = reader.text(doc, "slug")
    if slug is not None and not SLUG_RE.match(slug):
        reader.add(BAD_SLUG, key="slug", value=slug)
    title = reader.text(doc, "title")
    description = reader.text(doc, "description") or ""
    timezone = reader.text(doc, "timezone") or "UTC"
    if timezone not in zoneinfo.available_timezones():
        reader.add(BAD_TIMEZONE, value=timezone)
    phases = (
        _read_phases(reader, doc["phases"], r2c2_dues_required=_names_r2c2_tracks(doc))
        if doc.get("phases") is not None else {}
    )
    tracks = read_tracks(reader, doc["tracks"]) if doc.get("tracks") is not None else ()
    _check_track_dues(reader, tracks, phases)
    questions = _read_questions(reader, doc, tracks) if doc.get("questions") is not None else ()
    corpus = data_file_path(reader, "corpus", doc["corpus"]) if "corpus" in doc else None
    test_bank, test_bank_file = (
        read_test_bank(reader, doc["test_bank"], {q.qid for q in questions})
        if "test_bank" in doc else ((), None)
    )
    organisers = _read_usernames(reader, doc.get("organisers"), "organisers")
    teams = _read_teams(reader, doc.get("teams"), organisers)
    review_below = _read_probability(reader, doc.get("review_below", 0.8), "review_below")
    judge_thresholds = _read_thresholds(reader, doc.get("judge_thresholds"))
    agreement_target = _read_probability(reader, doc.get("agreement_target", 0.9),
                                         "agreement_target")
    agreement_risk = _read_probability(reader, doc.get("agreement_risk", 0.1), "agreement_risk")

    if reader.problems or slug is None or title is None:
        if corpus is not None:
            # The loader reads a good file's corpus once, as it stores it; a file refused
            # anyway gets its corpus's problems in the same report.
            reader.problems.extend(corpus_problems(corpus))
        raise CampaignFileError(reader.problems)
    return CampaignSpec(
        slug=slug, title=title, description=description, timezone=timezone, phases=phases,
        tracks=tracks, questions=questions, organisers=organisers, teams=teams,
        review_below=review_below, judge_thresholds=judge_thresholds,
        agreement_target=agreement_target, agreement_risk=agreement_risk,
        corpus=corpus, test_bank=test_bank, test_bank_file=test_bank_file,
    )


def _names_r2c2_tracks(doc: dict[str, Any]) -> bool:
    """Whether pr_due/ac_due are needed: a pr or ac track, or tracks we cannot tell."""
    tracks = doc.get("tracks")
    if not isinstance(tracks, list) or not tracks:
        return True
    kinds = [item.get("kind") if isinstance(item, dict) else None for item in tracks]
    return not all(kind in RUBRIC_KINDS for kind in kinds)


def _check_track_dues(
    reader: _Reader, tracks: tuple[TrackSpec, ...], phases: dict[str, datetime | None]
) -> None:
    """A ranking/response track is due after the topics are out and before results."""
    topics, results = phases.get("topics_release"), phases.get("results_release")
    for index, track in enumerate(tracks):
        due = track.due
        if due is None:
            continue
        if topics is not None and due < topics:
            reader.add(TRACK_DUE_ORDER, key=f"tracks[{index}].due", due=due.isoformat(),
                       relation="before", phase="topics_release", at=topics.isoformat())
        if results is not None and due > results:
            reader.add(TRACK_DUE_ORDER, key=f"tracks[{index}].due", due=due.isoformat(),
                       relation="after", phase="results_release", at=results.isoformat())


def _read_thresholds(reader: _Reader, value: Any) -> dict[str, float]:
    """judge_thresholds: {figure: a number from 0 to 1}, figures from JUDGE_THRESHOLDS."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.add(WRONG_TYPE, key="judge_thresholds", expected="a mapping",
                   found=_type_name(value))
        return {}
    reader.check_keys(value, tuple(JUDGE_THRESHOLDS), "judge_thresholds.")
    return {key: _read_probability(reader, figure, f"judge_thresholds.{key}")
            for key, figure in value.items() if key in JUDGE_THRESHOLDS}


def _read_probability(reader: _Reader, value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        reader.add(BAD_PROBABILITY, key=key, value=value)
        return 0.0
    return float(value)
