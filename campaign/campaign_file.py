"""Reading a campaign description (YAML, DESIGN.md section 9) into a CampaignSpec.

Pure: no Django imports, so the file can be checked on its own (a CLI, a pre-commit
hook). Every problem found is collected and reported at once; each message names
the file, the key or line, what was found and what was expected.
"""

from __future__ import annotations

import itertools
import re
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from grading.llm.prompts import ANSWER_CHECKS

# --- messages (tests match them exactly) -------------------------------------
NO_SUCH_FILE = "{file}: no such file"
NOT_UTF8 = "{file}: not UTF-8 text ({problem})"
YAML_SYNTAX = "{file}: line {line}: not valid YAML ({problem})"
NOT_A_MAPPING = "{file}: expected a mapping of campaign settings, found {found}"
UNKNOWN_KEY = "{file}: unknown key '{key}' (expected one of: {expected})"
MISSING_KEY = "{file}: missing required key '{key}'"
WRONG_TYPE = "{file}: {key}: expected {expected}, found {found}"
BAD_SLUG = "{file}: {key}: '{value}' is not a slug (expected letters, digits, '-' or '_')"
BAD_TIMEZONE = "{file}: timezone: '{value}' is not an IANA time zone (expected e.g. Asia/Tokyo)"
BAD_DATE = (
    "{file}: {key}: '{value}' is not an ISO 8601 date-time with a UTC offset "
    "(expected e.g. 2026-03-13T00:00:00+09:00)"
)
PHASE_ORDER = "{file}: phases: {later} ({b}) is before {earlier} ({a})"
BAD_URL = "{file}: {key}: '{value}' is not an http(s) URL (expected e.g. http://vllm:8000/v1)"
BAD_CHOICE = "{file}: {key}: '{value}' is not allowed (expected one of: {expected})"
BAD_COUNT = "{file}: {key}: expected a whole number of at least 1, found {value!r}"
BAD_PROBABILITY = "{file}: {key}: expected a number from 0 to 1, found {value!r}"
DUPLICATE_TRACK = "{file}: tracks: duplicate track slug '{slug}'"
ANSWER_CHECK_ON_PR = "{file}: {key}: answer_check applies to AC tracks only"
MISSING_DATA_FILE = "{file}: {key}: file '{path}' not found (paths are relative to {base})"
LINE_MALFORMED = "{path}: line {line}: expected '{expected}', found '{found}'"
LINE_BAD_QID = "{path}: line {line}: qID '{qid}' must be 1-64 characters without spaces or ';'"
DUPLICATE_QID = "{path}: line {line}: duplicate qID '{qid}' (first on line {first})"
UNKNOWN_QID = "{path}: line {line}: qID '{qid}' is not in {questions}"
NO_QUESTIONS = "{path}: no questions (expected '[qID];[Question]' lines)"
BAD_USERNAME = "{file}: {key}: '{value}' is not a username (expected letters, digits and @.+-_)"
BAD_TEAM_NAME = (
    "{file}: {key}: '{value}' is not a team name "
    "(expected letters, digits, '_' and '-', starting with a letter or digit, at most 64)"
)
DUPLICATE_TEAM = "{file}: teams: duplicate team name '{name}'"
USER_IN_TWO_TEAMS = "{file}: teams: user '{user}' is in both {first} and {second}"
ORGANISER_IN_TEAM = "{file}: teams: user '{user}' is an organiser and cannot be in team {team}"

TOP_KEYS = (
    "slug", "title", "description", "timezone", "phases", "tracks", "questions",
    "categories", "gold_answers", "organisers", "teams", "review_below", "judge_thresholds",
)
REQUIRED_TOP_KEYS = ("slug", "title", "phases", "tracks", "questions")
PHASE_KEYS = ("topics_release", "pr_due", "ac_due", "results_release")
REQUIRED_PHASE_KEYS = ("topics_release", "pr_due", "ac_due")
TRACK_KEYS = ("slug", "kind", "max_runs_per_team", "answer_check", "second_judge")
SECOND_JUDGE_KEYS = ("base_url", "model")
TRACK_KINDS = ("pr", "ac")
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

SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]{1,64}$")
QID_RE = re.compile(r"^[^\s;]{1,64}$")
USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")
# Run names start with the team's name: [Team]-AC-1, so no spaces, ';', ':' or '/'.
TEAM_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class CampaignFileError(Exception):
    """The file cannot be loaded; `problems` lists every reason, one message each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class TrackSpec:
    slug: str
    kind: str
    max_runs_per_team: int = 4
    answer_check: str = "nuggets"
    second_judge_base_url: str = ""
    second_judge_model: str = ""


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
    judge_thresholds: dict[str, float] = field(default_factory=dict)


class _NoTimestampLoader(yaml.SafeLoader):
    """SafeLoader that leaves dates as strings, so we parse (and reject) them ourselves."""


_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


@dataclass
class _Reader:
    """Collects problems while walking one campaign file."""

    file: Path
    problems: list[str] = field(default_factory=list)

    def add(self, template: str, **values: Any) -> None:
        self.problems.append(template.format(file=self.file, **values))

    def check_keys(self, mapping: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in mapping:
            if key not in allowed:
                self.add(UNKNOWN_KEY, key=f"{where}{key}", expected=", ".join(allowed))

    def text(self, mapping: dict[str, Any], key: str, where: str = "") -> str | None:
        value = mapping.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.add(WRONG_TYPE, key=f"{where}{key}", expected="text", found=_type_name(value))
            return None
        return value

    def date(self, value: Any, key: str) -> datetime | None:
        try:
            parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            self.add(BAD_DATE, key=key, value=value)
            return None
        return parsed

    def data_lines(self, key: str, value: Any) -> tuple[Path, list[tuple[int, str]]] | None:
        """Read a `[qID];[text]` file named by `key`, relative to the YAML file."""
        if not isinstance(value, str):
            self.add(WRONG_TYPE, key=key, expected="a file path", found=_type_name(value))
            return None
        path = (self.file.parent / value).resolve()
        if not path.is_file():
            self.add(MISSING_DATA_FILE, key=key, path=value, base=self.file.parent)
            return None
        try:
            content = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            self.problems.append(NOT_UTF8.format(file=path, problem=exc.reason))
            return None
        return path, [(n, line) for n, line in enumerate(content.splitlines(), 1) if line.strip()]


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


def _read_questions(reader: _Reader, doc: dict[str, Any]) -> tuple[QuestionSpec, ...]:
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
    return tuple(
        QuestionSpec(
            qid=qid,
            text=text,
            category=categories.get(qid, ("",))[-1],
            gold_answers=tuple(golds.get(qid, ())),
        )
        for qid, text in texts.items()
    )


def _read_keyed_lines(
    reader: _Reader,
    doc: dict[str, Any],
    key: str,
    expected: str,
    questions_path: Path,
    texts: dict[str, str],
) -> dict[str, list[str]]:
    """Lines `[qID];[value]` of an optional file; several lines per qID are allowed."""
    if doc.get(key) is None:
        return {}
    loaded = reader.data_lines(key, doc[key])
    if loaded is None:
        return {}
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


def _read_phases(reader: _Reader, value: Any) -> dict[str, datetime | None]:
    if not isinstance(value, dict):
        reader.add(WRONG_TYPE, key="phases", expected="a mapping", found=_type_name(value))
        return {}
    reader.check_keys(value, PHASE_KEYS, "phases.")
    phases: dict[str, datetime | None] = {}
    for key in PHASE_KEYS:
        if value.get(key) is None:
            if key in REQUIRED_PHASE_KEYS:
                reader.add(MISSING_KEY, key=f"phases.{key}")
            phases[key] = None
            continue
        phases[key] = reader.date(value[key], f"phases.{key}")
    for earlier, a, later, b in phases_out_of_order(phases):
        reader.add(PHASE_ORDER, earlier=earlier, later=later, a=a.isoformat(), b=b.isoformat())
    return phases


def _read_tracks(reader: _Reader, value: Any) -> tuple[TrackSpec, ...]:
    if not isinstance(value, list) or not value:
        reader.add(WRONG_TYPE, key="tracks", expected="a non-empty list of tracks",
                   found=_type_name(value))
        return ()
    tracks: list[TrackSpec] = []
    for index, item in enumerate(value):
        where = f"tracks[{index}]."
        if not isinstance(item, dict):
            reader.add(WRONG_TYPE, key=f"tracks[{index}]", expected="a mapping",
                       found=_type_name(item))
            continue
        reader.check_keys(item, TRACK_KEYS, where)
        slug = reader.text(item, "slug", where)
        kind = reader.text(item, "kind", where)
        for key, got in (("slug", slug), ("kind", kind)):
            if got is None and item.get(key) is None:
                reader.add(MISSING_KEY, key=f"{where}{key}")
        if slug is not None and not SLUG_RE.match(slug):
            reader.add(BAD_SLUG, key=f"{where}slug", value=slug)
        if kind is not None and kind not in TRACK_KINDS:
            reader.add(BAD_CHOICE, key=f"{where}kind", value=kind,
                       expected=", ".join(TRACK_KINDS))
        max_runs = item.get("max_runs_per_team", 4)
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            reader.add(BAD_COUNT, key=f"{where}max_runs_per_team", value=max_runs)
        answer_check = item.get("answer_check")
        if answer_check is not None:
            if kind == "pr":
                reader.add(ANSWER_CHECK_ON_PR, key=f"{where}answer_check")
            elif answer_check not in ANSWER_CHECKS:
                reader.add(BAD_CHOICE, key=f"{where}answer_check", value=answer_check,
                           expected=", ".join(ANSWER_CHECKS))
        second = _read_second_judge(reader, item.get("second_judge"), f"{where}second_judge")
        if slug and kind in TRACK_KINDS and isinstance(max_runs, int):
            if any(track.slug == slug for track in tracks):
                reader.add(DUPLICATE_TRACK, slug=slug)
                continue
            tracks.append(TrackSpec(slug=slug, kind=kind, max_runs_per_team=max_runs,
                                    answer_check=str(answer_check or "nuggets"),
                                    second_judge_base_url=second[0],
                                    second_judge_model=second[1]))
    return tuple(tracks)


def _read_second_judge(reader: _Reader, value: Any, key: str) -> tuple[str, str]:
    """(base_url, model) of an optional second judge: {base_url: URL, model: NAME}."""
    if value is None:
        return "", ""
    if not isinstance(value, dict):
        reader.add(WRONG_TYPE, key=key, expected="a mapping with base_url and model",
                   found=_type_name(value))
        return "", ""
    reader.check_keys(value, SECOND_JUDGE_KEYS, f"{key}.")
    base_url = reader.text(value, "base_url", f"{key}.")
    model = reader.text(value, "model", f"{key}.")
    for name, got in (("base_url", base_url), ("model", model)):
        if not got:
            reader.add(MISSING_KEY, key=f"{key}.{name}")
    if base_url and not base_url.startswith(("http://", "https://")):
        reader.add(BAD_URL, key=f"{key}.base_url", value=base_url)
    return base_url or "", model or ""


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
    """Parse and check a campaign YAML file and the files it names.

    Raises CampaignFileError listing every problem found.
    """
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
    phases = _read_phases(reader, doc["phases"]) if doc.get("phases") is not None else {}
    tracks = _read_tracks(reader, doc["tracks"]) if doc.get("tracks") is not None else ()
    questions = _read_questions(reader, doc) if doc.get("questions") is not None else ()
    organisers = _read_usernames(reader, doc.get("organisers"), "organisers")
    teams = _read_teams(reader, doc.get("teams"), organisers)
    review_below = _read_probability(reader, doc.get("review_below", 0.8), "review_below")
    judge_thresholds = _read_thresholds(reader, doc.get("judge_thresholds"))

    if reader.problems or slug is None or title is None:
        raise CampaignFileError(reader.problems)
    return CampaignSpec(
        slug=slug, title=title, description=description, timezone=timezone, phases=phases,
        tracks=tracks, questions=questions, organisers=organisers, teams=teams,
        review_below=review_below, judge_thresholds=judge_thresholds,
    )


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
