"""Reads for campaigns: who a user is in a campaign and what they may see."""

from __future__ import annotations

import itertools
import zoneinfo
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from campaign.kinds import kind_of
from campaign.models import (
    Campaign,
    CorpusPassage,
    Membership,
    Question,
    Role,
    TestBankItem,
    TestBankItemQuerySet,
    Track,
)
from submissions.formats.common import TextSink
from submissions.formats.test_bank import BankItem, QueryBank, write_test_bank
from submissions.formats.upload_window import campaign_time, window_refusal

QUESTIONS_NOT_YET = "The questions of {campaign} are released at {at} ({zone})."
QUESTIONS_NOT_PUBLIC = (
    "The questions of {campaign} are shown to its participants; the public sees them "
    "once results are released."
)


def campaign_list() -> QuerySet[Campaign]:
    """Every campaign: that a campaign exists, and its timeline, are public."""
    return Campaign.objects.prefetch_related("tracks")


def campaign_membership(
    *, campaign: Campaign, user: AbstractBaseUser | AnonymousUser
) -> Membership | None:
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.select_related("team")
        .filter(campaign=campaign, user_id=user.pk)
        .first()
    )


def campaign_role(*, campaign: Campaign, user: AbstractBaseUser | AnonymousUser) -> str | None:
    """'organiser', 'participant' or None (the public). Superusers organise every campaign."""
    if user.is_authenticated and getattr(user, "is_superuser", False):
        return Role.ORGANISER
    membership = campaign_membership(campaign=campaign, user=user)
    return membership.role if membership else None


def questions_refusal(
    *, campaign: Campaign, role: str | None, now: datetime
) -> str | None:
    """Why this role may not see the questions now, or None: organisers always may,
    participants from topics_release, the public from results_release."""
    if role == Role.ORGANISER:
        return None
    if role == Role.PARTICIPANT:
        if campaign.topics_released(now):
            return None
        return QUESTIONS_NOT_YET.format(
            campaign=campaign.slug, at=campaign_time(campaign.topics_release, campaign.timezone),
            zone=campaign.timezone,
        )
    if campaign.results_released(now):
        return None
    return QUESTIONS_NOT_PUBLIC.format(campaign=campaign.slug)


def question_list(*, campaign: Campaign, with_gold: bool) -> QuerySet[Question]:
    questions = campaign.questions.all()
    return questions.prefetch_related("gold_answers") if with_gold else questions


@dataclass(frozen=True)
class TimelineEntry:
    """One phase as people see it: in the campaign's zone, with UTC beside it."""

    key: str
    label: str
    at_utc: datetime
    at_local: datetime
    passed: bool


PHASE_LABELS = {
    "topics_release": "Questions released",
    "pr_due": "PR runs due (then shared with all teams)",
    "ac_due": "AC runs due",
    "results_release": "Results released",
}


#: The phases that are the deadline of a kind of track (campaign.kinds), shown only with one.
R2C2_DUES = ("pr_due", "ac_due")
TRACK_DUE_LABEL = "Runs of track {track} due"


def phase_applies(key: str, tracks: Sequence[Track]) -> bool:
    """Does the phase `key` mean something for a campaign with these tracks? pr_due and
    ac_due do not in a campaign with ranking/response tracks and no track of their kind:
    it stores them only to keep the columns filled (campaign.services)."""
    if key not in R2C2_DUES or not any(track.is_rubric for track in tracks):
        return True
    return any(kind_of(track.kind).due == key for track in tracks)


def campaign_timeline(*, campaign: Campaign, now: datetime) -> list[TimelineEntry]:
    """The campaign's phases in time order, with each ranking/response track's deadline;
    pr_due and ac_due are left out where no track of their kind gives them meaning."""
    zone = zoneinfo.ZoneInfo(campaign.timezone)
    tracks = list(campaign.tracks.all())
    moments: list[tuple[str, str, datetime | None]] = [
        (key, label, getattr(campaign, key)) for key, label in PHASE_LABELS.items()
        if phase_applies(key, tracks)
    ]
    moments += [(f"track:{track.slug}", TRACK_DUE_LABEL.format(track=track.slug),
                 track.own_due) for track in tracks if track.is_rubric]
    entries = [
        TimelineEntry(key=key, label=label, at_utc=at.astimezone(UTC),
                      at_local=at.astimezone(zone), passed=now >= at)
        for key, label, at in moments if at is not None
    ]
    return sorted(entries, key=lambda entry: entry.at_utc)


def track_window_refusal(*, track: Track, now: datetime) -> str | None:
    """Why `track` takes no participant's run at `now` (not open yet, or closed), in the
    campaign's time; None while it is open. Organisers may enter runs at any time."""
    campaign = track.campaign
    return window_refusal(track=track.slug, opens=campaign.topics_release, due=track.due(),
                          now=now, zone=campaign.timezone)


@dataclass(frozen=True)
class TrackWindow:
    """A track as the Submit page shows it: open or why not, its deadline in the
    campaign's zone to the minute."""

    track: Track
    due: str
    refusal: str | None

    @property
    def open(self) -> bool:
        return self.refusal is None


def track_windows(*, campaign: Campaign, now: datetime) -> list[TrackWindow]:
    """Each track of `campaign` with whether it takes participants' runs at `now`."""
    return [TrackWindow(track=track, due=campaign_time(track.due(), campaign.timezone),
                        refusal=track_window_refusal(track=track, now=now))
            for track in campaign.tracks.all()]


#: Docids per query of `corpus_missing`: well under every database's limit on
#: parameters (SQLite's is 32,766; Oracle's IN list 1,000 is not a concern here).
CORPUS_LOOKUP_BATCH = 900


def corpus_missing(*, campaign: Campaign, docids: Iterable[str]) -> set[str]:
    """The docids of `docids` that are not in the campaign's corpus, one query per batch: the
    TREC run parser's `missing_docids`."""
    wanted = list(dict.fromkeys(docids))
    missing: set[str] = set()
    for start in range(0, len(wanted), CORPUS_LOOKUP_BATCH):
        batch = wanted[start : start + CORPUS_LOOKUP_BATCH]
        found = set(CorpusPassage.objects.filter(campaign=campaign, docid__in=batch)
                    .values_list("docid", flat=True))
        missing.update(docid for docid in batch if docid not in found)
    return missing


def testbank_items(
    *, campaign: Campaign, qid: str | None = None, status: str | None = None
) -> TestBankItemQuerySet:
    """The campaign's test-bank items (retired ones too, unless `status` says), in the
    order of the questions file. Secret: for organisers only."""
    items = TestBankItem.objects.filter(campaign=campaign).select_related(
        "question", "created_by")
    if qid is not None:
        items = items.filter(question__qid=qid)
    if status is not None:
        items = items.filter(status=status)
    return items


def testbank_current(*, campaign: Campaign) -> list[QueryBank]:
    """The bank as grading uses it (drafts and active items, not retired ones), one
    `QueryBank` per query that has items, in the order of the questions file."""
    banks: list[QueryBank] = []
    items = testbank_items(campaign=campaign).current()
    for question, group in itertools.groupby(items, key=lambda item: item.question):
        listed = list(group)
        banks.append(QueryBank(
            query_id=question.qid, query_text=question.text, target=listed[0].target,
            items=tuple(BankItem(item.item_id, item.text, tuple(item.answers) or None)
                        for item in listed)))
    return banks


def testbank_export(*, campaign: Campaign, text_file: TextSink) -> None:
    """Write the current bank in the workbench's JSONL shape (docs/rubric.md)."""
    write_test_bank(testbank_current(campaign=campaign), text_file)
