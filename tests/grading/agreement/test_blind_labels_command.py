"""`blind_labels`: samples drawn and labelled from a label file, the report printed, and
the escalated judgments settled from the same file, as the demo does."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grading.agreement.report import agreement_report
from grading.models import BlindItem, JudgmentEdit
from grading.review.queue import escalation_filter, official_judgments
from submissions.models import Run
from tests.support import Personas

pytestmark = pytest.mark.django_db

#: What a careful assessor says of tests/data/toy/WASEDA-AC-1 (tests/data/README.md).
TOY_LABELS = [
    {"run": "WASEDA-AC-1", "qid": "D001", "nugget_num": 1, "entailed": True},
    {"run": "WASEDA-AC-1", "qid": "D001", "nugget_num": 2, "entailed": True},
    {"run": "WASEDA-AC-1", "qid": "D001", "nugget_num": 3, "entailed": False},
    {"run": "WASEDA-AC-1", "qid": "D001", "correct": True, "relevant": [1, 2]},
    {"run": "WASEDA-AC-1", "qid": "D002", "nugget_num": 1, "entailed": True},
    {"run": "WASEDA-AC-1", "qid": "D002", "nugget_num": 2, "entailed": False},
    {"run": "WASEDA-AC-1", "qid": "D002", "correct": False},
    {"run": "WASEDA-AC-1", "qid": "D003", "nugget_num": 1, "entailed": True},
    {"run": "WASEDA-AC-1", "qid": "D003", "nugget_num": 2, "entailed": True},
    {"run": "WASEDA-AC-1", "qid": "D003", "nugget_num": 3, "entailed": True},
    {"run": "WASEDA-AC-1", "qid": "D003", "correct": True, "relevant": [1, 2]},
]


def label_file(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def blind_labels(personas: Personas, *args: str) -> str:
    out = io.StringIO()
    call_command("blind_labels", "toy", "--as", personas.organiser.get_username(), *args,
                 stdout=out)
    return out.getvalue()


def test_samples_are_drawn_labelled_and_reported_and_escalations_settled_from_the_file(
    personas: Personas, doubted: Run, tmp_path: Path
) -> None:
    campaign = personas.campaign
    campaign.agreement_target, campaign.agreement_risk = 0.75, 0.5
    campaign.save()
    labels = label_file(tmp_path, TOY_LABELS)
    out = blind_labels(personas, "--labels", str(labels), "--draw", "entailment:4",
                       "--draw", "answer:3", "--seed", "3")
    assert "Drew blind sample" in out and "4 entailment judgments of 8 (seed 3)" in out
    assert "3 answer judgments of 3 (seed 4)" in out
    assert "Labelled 7 sampled judgment(s)" in out
    assert not BlindItem.objects.filter(label__isnull=True).exists()
    # The scripted judge agrees with the assessor everywhere: 4/4 and 3/3.
    assert "entailment: 4 labelled, agreement 4/4 = 1.000" in out
    escalated = official_judgments(campaign=campaign).filter(
        escalation_filter(campaign=campaign), edited_label__isnull=True)
    waiting = escalated.count()

    out = blind_labels(personas, "--labels", str(labels), "--settle-escalated")
    assert f"Settled {waiting} escalated judgment(s) from the label file; 0 not in it" in out
    assert not escalated.exists()
    settled = JudgmentEdit.objects.filter(note__startswith="Settled from a label file")
    assert settled.count() == waiting
    assert {line.kind: line.unreviewed for line in agreement_report(campaign=campaign)} == {
        "entailment": 0, "answer": 0}


def test_a_bad_line_is_named_and_nothing_is_drawn_or_labelled(
    personas: Personas, doubted: Run, tmp_path: Path
) -> None:
    labels = label_file(tmp_path, [TOY_LABELS[0], {"run": "WASEDA-AC-1", "qid": "D001",
                                                   "nugget_num": 2, "entailed": "yes"}])
    with pytest.raises(CommandError, match="line 2: expected nugget_num"):
        blind_labels(personas, "--labels", str(labels), "--draw", "entailment:4")
    assert not BlindItem.objects.exists()
