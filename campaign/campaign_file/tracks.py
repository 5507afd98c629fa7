"""The `tracks:` list of a campaign file: R2C2 tracks (pr, ac) and ranking/response tracks
with their own settings; a key of one family on the other is a problem, never ignored
(docs/campaign-file.md, "Tracks")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from campaign.campaign_file.fields import (
    BAD_SLUG,
    SLUG_RE,
    Choice,
    Matching,
    NotHere,
    Text,
    Timestamp,
    Url,
    Value,
    WholeNumber,
)
from campaign.campaign_file.problems import Refused
from campaign.campaign_file.sections import Items, Section
from campaign.kinds import KINDS, kind_of, with_article
from campaign.vocabulary import ANSWER_CHECKS, RubricAnswerCheck
from scoring.measures.catalogue import RANKS_BY, significance_candidates

ANSWER_CHECK_ON_PR = "answer_check applies to AC, ranking and response tracks only"
RUBRIC_KEY_ON_R2C2 = (
    "applies to ranking and response tracks only (a {kind} track is due by phases.{kind}_due)"
)
BAD_TESTED = ("'{value}' cannot be tested on {kind} track (expected one of: {expected}; "
              "{ranking}, the ranking measure, always is)")
DUPLICATE_TRACK = "duplicate track slug '{slug}'"

TRACK_KINDS = tuple(KINDS)
R2C2_TRACK_KEYS = ("slug", "kind", "max_runs_per_team", "answer_check", "second_judge")
RUBRIC_TRACK_KEYS = ("due", "depth", "min_grade", "label", "cover_k")
TRACK_KEYS = (*R2C2_TRACK_KEYS, *RUBRIC_TRACK_KEYS, "significance_tests")
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
    return str(RubricAnswerCheck.NONE) if kind_of(kind).rubric else "nuggets"


class Measures(Value):
    """The measures a track's randomised test takes besides its ranking measure."""

    expected = "a list of measure names"

    def __init__(self, kind: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kind = kind

    def to_internal_value(self, data: Any) -> tuple[str, ...]:
        if not isinstance(data, list) or not all(isinstance(name, str) for name in data):
            raise self.wrong_type(data)
        ranking = RANKS_BY[self.kind]
        allowed = [name for name in significance_candidates(self.kind) if name != ranking]
        bad = [BAD_TESTED.format(value=name, kind=with_article(self.kind),
                                 expected=", ".join(allowed), ranking=ranking)
               for name in data if name not in allowed]
        tested = tuple(dict.fromkeys(name for name in data if name in allowed))
        if bad:
            raise Refused(bad, partial=tested)
        return tested


class SecondJudge(Section):
    """An optional second judge: (base_url, model) of an OpenAI-compatible endpoint."""

    expected = "a mapping with base_url and model"
    base_url = Url(allow_blank=False)
    model = Text(allow_blank=False)

    def make(self, values: dict[str, Any]) -> tuple[str, str]:
        return values.get("base_url", ""), values.get("model", "")


class Track(Section):
    """A track, read with the keys of its `kind` (none but the common ones for a kind
    unknown); each kind checks answers in its own way."""

    known_keys = TRACK_KEYS

    def __init__(self, *args: Any, kind: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.track_kind = kind

    def get_fields(self) -> dict[str, Any]:
        kind = self.track_kind
        entry = KINDS.get(kind) if kind is not None else None
        fields: dict[str, Any] = {
            "slug": Matching(SLUG_RE, BAD_SLUG),
            "kind": Choice(TRACK_KINDS, text_first=True),
            "max_runs_per_team": WholeNumber(null_is_missing=False, required=False),
        }
        if entry is not None and not entry.graded:
            fields["answer_check"] = NotHere(ANSWER_CHECK_ON_PR, required=False)
        elif entry is not None and not entry.rubric:
            fields["answer_check"] = Choice(tuple(map(str, ANSWER_CHECKS)), required=False)
        elif entry is not None:
            fields["answer_check"] = Choice(RUBRIC_ANSWER_CHECKS,
                                            default=default_answer_check(entry.value))
        fields["second_judge"] = SecondJudge(required=False)
        if entry is not None and not entry.rubric:
            fields |= {key: NotHere(RUBRIC_KEY_ON_R2C2.format(kind=kind), null_is_missing=False,
                                    required=False) for key in RUBRIC_TRACK_KEYS}
        elif entry is not None:
            # min_grade 0 would count every item as answered: the measures refuse it.
            fields |= {
                "due": Timestamp(),
                "depth": WholeNumber(1, MAX_DEPTH, null_is_missing=False, required=False),
                "min_grade": WholeNumber(1, MAX_GRADE, null_is_missing=False, required=False),
                "cover_k": WholeNumber(1, MAX_DEPTH, null_is_missing=False, required=False),
                "label": Choice(RUBRIC_LABELS, null_is_missing=False, required=False),
            }
        if kind is not None:
            fields["significance_tests"] = Measures(kind, required=False)
        return fields

    def make(self, values: dict[str, Any]) -> TrackSpec | None:
        if "slug" not in values or "kind" not in values:
            return None
        settings = dict(values)
        base_url, model = settings.pop("second_judge", ("", ""))
        return TrackSpec(**settings, second_judge_base_url=base_url, second_judge_model=model)


class Tracks(Items):
    """The non-empty list of tracks, each read as its kind says, each slug once."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=Track(), expected="a non-empty list of tracks", allow_empty=False,
                         **kwargs)
        self.of_kind = {kind: Track(kind=kind) for kind in TRACK_KINDS}
        for track in self.of_kind.values():
            self.adopt(track)

    def child_for(self, item: Any) -> Section:
        kind = item.get("kind") if isinstance(item, dict) else None
        return self.of_kind.get(kind, self.child) if isinstance(kind, str) else self.child

    def check(self, items: list[Any]) -> list[str]:
        seen: set[str] = set()
        told = []
        for track in items:
            if track.slug in seen:
                told.append(DUPLICATE_TRACK.format(slug=track.slug))
            seen.add(track.slug)
        return told


def names_r2c2_tracks(doc: Any) -> bool:
    """Whether pr_due/ac_due are needed: a pr or ac track, or tracks we cannot tell."""
    tracks = doc.get("tracks") if isinstance(doc, dict) else None
    if not isinstance(tracks, list) or not tracks:
        return True
    kinds = [item.get("kind") if isinstance(item, dict) else None for item in tracks]
    return not all(kind in KINDS and kind_of(kind).rubric for kind in kinds)
