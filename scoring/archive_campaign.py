"""The campaign's own members of its results archive: the campaign file regenerated from the
database, its questions, gold answers, test bank and corpus (docs/results.md)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import yaml

from campaign.kinds import kind_of
from campaign.models import Campaign, TestBankItem
from scoring import archive_format as fmt


def jsonl_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True) + "\n"


def when(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def campaign_yaml(*, campaign: Campaign, full: bool) -> str:
    """The campaign file regenerated from the database, its data files named as members of the
    archive; the public archive leaves out gold answers, test bank, corpus and people."""
    zone = ZoneInfo(campaign.timezone)
    tracks = list(campaign.tracks.order_by("slug"))
    phases = {"topics_release": campaign.topics_release}
    if any(kind_of(track.kind).due != "own" for track in tracks):
        phases |= {"pr_due": campaign.pr_due, "ac_due": campaign.ac_due}
    if campaign.results_release is not None:
        phases["results_release"] = campaign.results_release
    doc: dict[str, Any] = {
        "slug": campaign.slug, "title": campaign.title, "description": campaign.description,
        "timezone": campaign.timezone,
        "phases": {key: value.astimezone(zone).isoformat() for key, value in phases.items()},
        "tracks": [_track_doc(track, zone) for track in tracks],
        "questions": fmt.QUESTIONS,
    }
    if campaign.questions.exclude(category="").exists():
        doc["categories"] = fmt.CATEGORIES
    if full:
        if has_gold(campaign):
            doc["gold_answers"] = fmt.GOLD_ANSWERS
        if campaign.corpus.exists():
            doc["corpus"] = fmt.CORPUS
        if TestBankItem.objects.filter(campaign=campaign).current().exists():
            doc["test_bank"] = fmt.TEST_BANK
        doc["review_below"] = campaign.review_below
        if campaign.judge_thresholds:
            doc["judge_thresholds"] = campaign.judge_thresholds
        memberships = campaign.memberships.select_related("user", "team")
        doc["organisers"] = sorted(m.user.get_username() for m in memberships
                                   if m.team_id is None)
        members: dict[str, list[str]] = defaultdict(list)
        for membership in memberships:
            if membership.team is not None:
                members[membership.team.name].append(membership.user.get_username())
        doc["teams"] = [{"name": team.name, "members": sorted(members[team.name])}
                        for team in campaign.teams.order_by("name")]
    else:
        doc["teams"] = [{"name": team.name, "members": []}
                        for team in campaign.teams.order_by("name")]
    header = (f"# Regenerated from the database by `manage.py export_campaign "
              f"{campaign.slug}`; paths name members of this archive.\n")
    return header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=88)


def _track_doc(track: Any, zone: ZoneInfo) -> dict[str, Any]:
    doc: dict[str, Any] = {"slug": track.slug, "kind": track.kind,
                           "max_runs_per_team": track.max_runs_per_team}
    kind = kind_of(track.kind)
    if kind.graded:
        doc["answer_check"] = track.answer_check
    if track.second_judge_model:
        doc["second_judge"] = {"base_url": track.second_judge_base_url,
                               "model": track.second_judge_model}
    if kind.rubric:
        doc |= {"due": track.own_due.astimezone(zone).isoformat() if track.own_due else None,
                "depth": track.depth, "min_grade": track.min_grade, "label": track.label,
                "cover_k": track.cover_k}
    return doc


def has_gold(campaign: Campaign) -> bool:
    return campaign.questions.filter(gold_answers__isnull=False).exists()


def question_lines(campaign: Campaign) -> Iterator[str]:
    for qid, text in campaign.questions.order_by("position", "qid").values_list("qid", "text"):
        yield f"{qid};{text}\n"


def category_lines(campaign: Campaign) -> Iterator[str]:
    for qid, category in (campaign.questions.exclude(category="")
                          .order_by("position", "qid").values_list("qid", "category")):
        yield f"{qid};{category}\n"


def gold_lines(campaign: Campaign) -> Iterator[str]:
    from campaign.models import GoldAnswer

    for qid, text in (GoldAnswer.objects.filter(question__campaign=campaign)
                      .order_by("question__position", "question__qid", "position")
                      .values_list("question__qid", "text")):
        yield f"{qid};{text}\n"


def test_bank_item_lines(campaign: Campaign) -> Iterator[str]:
    """Every item, retired ones too, with its status, text hash and history, in the
    order grading reads the bank (the replay reads the current items from here)."""
    items = (TestBankItem.objects.filter(campaign=campaign).select_related("question")
             .prefetch_related("edits__user")
             .order_by("question__position", "created_at", "id"))
    for item in items:
        yield jsonl_line({
            "item_id": item.item_id, "qid": item.question.qid, "target": item.target,
            "text": item.text, "text_hash": item.text_hash, "answers": item.answers,
            "status": item.status, "created_at": when(item.created_at),
            "edits": [{"action": edit.action, "by": username(edit.user),
                       "at": when(edit.at), "note": edit.note,
                       "previous_text": edit.previous_text,
                       "previous_answers": edit.previous_answers,
                       "previous_status": edit.previous_status, "text": edit.text,
                       "answers": edit.answers} for edit in item.edits.all()],
        })


def corpus_lines(campaign: Campaign) -> Iterator[str]:
    for docid, text in (campaign.corpus.order_by("docid").values_list("docid", "text")
                        .iterator(chunk_size=2000)):
        yield json.dumps({"docid": docid, "text": text}, ensure_ascii=False) + "\n"
