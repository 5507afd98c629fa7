"""The `tracks:` list of a campaign file: R2C2 tracks (pr, ac) and ranking/response tracks
with their own settings; a key of one family on the other is a problem, never ignored
(docs/campaign-file.md, "Tracks")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from campaign.campaign_file.common import (
    BAD_CHOICE,
    BAD_COUNT,
    BAD_SLUG,
    BAD_URL,
    DUPLICATE_TRACK,
    MISSING_KEY,
    SLUG_RE,
    WRONG_TYPE,
    _Reader,
    _type_name,
)
from campaign.vocabulary import ANSWER_CHECKS, RubricAnswerCheck
from scoring.measures.catalogue import RANKS_BY, significance_candidates

ANSWER_CHECK_ON_PR = "{file}: {key}: answer_check applies to AC, ranking and response tracks only"
RUBRIC_KEY_ON_R2C2 = (
    "{file}: {key}: applies to ranking and response tracks only "
    "(a {kind} track is due by phases.{kind}_due)"
)
BAD_RANGE = "{file}: {key}: expected a whole number from {low} to {high}, found {value!r}"
BAD_TESTED = ("{file}: {key}: '{value}' cannot be tested on {kind} track (expected one of: "
              "{expected}; {ranking}, the ranking measure, always is)")

R2C2_KINDS = ("pr", "ac")
RUBRIC_KINDS = ("ranking", "response")
TRACK_KINDS = (*R2C2_KINDS, *RUBRIC_KINDS)
R2C2_TRACK_KEYS = ("slug", "kind", "max_runs_per_team", "answer_check", "second_judge")
RUBRIC_TRACK_KEYS = ("due", "depth", "min_grade", "label", "cover_k")
TRACK_KEYS = (*R2C2_TRACK_KEYS, *RUBRIC_TRACK_KEYS, "significance_tests")
SECOND_JUDGE_KEYS = ("base_url", "model")
RUBRIC_ANSWER_CHECKS = tuple(str(check) for check in RubricAnswerCheck)
#: label: max = the highest grade over the query's items; count = how many items reach
#: min_grade (Rubric-Qrels, docs/measures.md).
RUBRIC_LABELS = ("max", "count")

DEFAULT_DEPTH = 20
# On the self-rating scale (grading/llm/prompts.py,
# "Pencils Down!" Table 2) 4 is the lowest grade at which the passage answers the item.
DEFAULT_MIN_GRADE = 4
DEFAULT_COVER_K = 10
# A TREC run is at most 1000 deep by custom (trec_eval's default cut); grading deeper
# than a run can be is a typo.
MAX_DEPTH = 1000
MAX_GRADE = 5


@dataclass(frozen=True)
class TrackSpec:
    slug: str
    kind: str
    max_runs_per_team: int = 4
    answer_check: str = "nuggets"
    second_judge_base_url: str = ""
    second_judge_model: str = ""
    # RUBRIC tracks only (ranking, response).
    due: datetime | None = None
    depth: int = DEFAULT_DEPTH
    min_grade: int = DEFAULT_MIN_GRADE
    label: str = "max"
    cover_k: int = DEFAULT_COVER_K
    significance_tests: tuple[str, ...] = ()


def default_answer_check(kind: str) -> str:
    """What a track checks answers against when its file says nothing."""
    return str(RubricAnswerCheck.NONE) if kind in RUBRIC_KINDS else "nuggets"


def read_tracks(reader: _Reader, value: Any) -> tuple[TrackSpec, ...]:
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
        answer_check = _read_answer_check(reader, item, kind, where)
        second = _read_second_judge(reader, item.get("second_judge"), f"{where}second_judge")
        rubric = _read_rubric_settings(reader, item, kind, where)
        tested = _read_significance_tests(reader, item.get("significance_tests"), kind,
                                          f"{where}significance_tests")
        if slug and kind in TRACK_KINDS and isinstance(max_runs, int):
            if any(track.slug == slug for track in tracks):
                reader.add(DUPLICATE_TRACK, slug=slug)
                continue
            tracks.append(TrackSpec(slug=slug, kind=kind, max_runs_per_team=max_runs,
                                    answer_check=answer_check,
                                    second_judge_base_url=second[0],
                                    second_judge_model=second[1],
                                    significance_tests=tested, **rubric))
    return tuple(tracks)


def _read_answer_check(reader: _Reader, item: dict[str, Any], kind: str | None,
                       where: str) -> str:
    """The track's answer_check: nuggets|gold|both on AC tracks, none|key|llm on
    ranking/response tracks (each kind checks answers in its own way)."""
    answer_check = item.get("answer_check")
    if answer_check is None or kind not in TRACK_KINDS:
        return default_answer_check(kind or "")
    if kind == "pr":
        reader.add(ANSWER_CHECK_ON_PR, key=f"{where}answer_check")
        return default_answer_check(kind)
    allowed = RUBRIC_ANSWER_CHECKS if kind in RUBRIC_KINDS else tuple(map(str, ANSWER_CHECKS))
    if answer_check not in allowed:
        reader.add(BAD_CHOICE, key=f"{where}answer_check", value=answer_check,
                   expected=", ".join(allowed))
        return default_answer_check(kind)
    return str(answer_check)


def _read_rubric_settings(reader: _Reader, item: dict[str, Any], kind: str | None,
                          where: str) -> dict[str, Any]:
    """due, depth, min_grade, label, cover_k of a ranking/response track (defaults for
    a pr/ac track, which may name none of them)."""
    if kind in R2C2_KINDS:
        for key in RUBRIC_TRACK_KEYS:
            if key in item:
                reader.add(RUBRIC_KEY_ON_R2C2, key=f"{where}{key}", kind=kind)
        return {}
    if kind not in RUBRIC_KINDS:
        return {}
    settings: dict[str, Any] = {}
    if item.get("due") is None:
        reader.add(MISSING_KEY, key=f"{where}due")
    else:
        settings["due"] = reader.date(item["due"], f"{where}due")
    # min_grade 0 would count every item as answered: the measures refuse it.
    for key, default, low, high in (("depth", DEFAULT_DEPTH, 1, MAX_DEPTH),
                                    ("min_grade", DEFAULT_MIN_GRADE, 1, MAX_GRADE),
                                    ("cover_k", DEFAULT_COVER_K, 1, MAX_DEPTH)):
        value = item.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            reader.add(BAD_RANGE, key=f"{where}{key}", low=low, high=high, value=value)
        else:
            settings[key] = value
    label = item.get("label", "max")
    if label not in RUBRIC_LABELS:
        reader.add(BAD_CHOICE, key=f"{where}label", value=label,
                   expected=", ".join(RUBRIC_LABELS))
    else:
        settings["label"] = label
    return settings


def _read_significance_tests(reader: _Reader, value: Any, kind: str | None,
                             key: str) -> tuple[str, ...]:
    """The measures tested besides the ranking measure: a list of the kind's keys."""
    if value is None or kind not in TRACK_KINDS:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        reader.add(WRONG_TYPE, key=key, expected="a list of measure names",
                   found=_type_name(value))
        return ()
    ranking = RANKS_BY[kind]
    allowed = [m for m in significance_candidates(kind) if m != ranking]
    for name in value:
        if name not in allowed:
            article = "an" if kind[0] in "aeiou" else "a"
            reader.add(BAD_TESTED, key=key, value=name, kind=f"{article} {kind}",
                       expected=", ".join(allowed), ranking=ranking)
    return tuple(dict.fromkeys(v for v in value if v in allowed))


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
