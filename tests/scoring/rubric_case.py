"""A RUBRIC track small enough to score by hand (docs/measures.md), on the toy
campaign's queries D001..D003: two runs, two test-bank items for D001 and two for
D002, D003 without items; grades stored as grading stores them (a rubric Judgment per
(passage, item), linked by a PassageItemGrade).

Grades (0..5, "Pencils Down!" Table 2), items A, B of D001 and C, E of D002:

    D001  d1: A 5, B 2   d2: A 1, B 0   d3: A 3, B 4   d4: A 0, B 0
          d8: A 5, B 5   (graded, but below the track's depth 3 in every run here)
    D002  d5: C 4, E 3   d6: C 2, E 1   d7: C 0, E 0

Runs, in rank order (depth 3: the top 3 of each query are the pool):

    WASEDA-R1  D001: d1 d2 d3 d8    D002: d5 d6
    KYOTO-R1   D001: d3 d4          D002: d6 d7    D003: d9 (no items: never graded)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from campaign.models import CorpusPassage, Team, TestBankItem, Track
from campaign.testbank import testbank_add
from grading.models import Judgment, JudgmentKind, JudgmentStatus, PassageItemGrade
from submissions.models import RankedPassage, Run, RunStatus
from tests.factories import TrackFactory
from tests.support import Personas

JUDGE_MODEL = "scripted-judge"
PROMPT_VERSION = "rubric-v1"

GRADES: dict[str, dict[str, dict[str, int]]] = {
    "D001": {"d1": {"A": 5, "B": 2}, "d2": {"A": 1, "B": 0}, "d3": {"A": 3, "B": 4},
             "d4": {"A": 0, "B": 0}, "d8": {"A": 5, "B": 5}},
    "D002": {"d5": {"C": 4, "E": 3}, "d6": {"C": 2, "E": 1}, "d7": {"C": 0, "E": 0}},
}
RUNS = {
    ("WASEDA", "WASEDA-R1"): {"D001": ["d1", "d2", "d3", "d8"], "D002": ["d5", "d6"]},
    ("KYOTO", "KYOTO-R1"): {"D001": ["d3", "d4"], "D002": ["d6", "d7"], "D003": ["d9"]},
}
CORPUS_TEXT = "Passage {n} about films."
ITEM_TEXTS = {
    "A": ("D001", "questions", "Who directed Alien?"),
    "B": ("D001", "questions", "When was Alien released?"),
    "C": ("D002", "nuggets", "Toy Story was the first computer-animated feature."),
    "E": ("D002", "nuggets", "Toy Story was made by Pixar."),
}


@dataclass
class RubricCase:
    track: Track
    items: dict[str, TestBankItem]  # by letter
    runs: dict[str, Run]  # by name
    judgments: dict[tuple[str, str], Judgment]  # by (docid, letter)

    def item_id(self, letter: str) -> str:
        return self.items[letter].item_id


def rubric_case(personas: Personas, *, label: str = "max", min_grade: int = 4) -> RubricCase:
    """The case above on a ranking track `dl` (depth 3, cover_k 10), runs GRADED."""
    campaign = personas.campaign
    track = TrackFactory.create(campaign=campaign, slug="dl", kind="ranking",
                                answer_check="none", depth=3, cover_k=10, label=label,
                                min_grade=min_grade,
                                own_due=timezone.now() - timedelta(days=1))
    items = {letter: testbank_add(campaign=campaign, user=None, qid=qid, target=target,
                                  text=text)
             for letter, (qid, target, text) in ITEM_TEXTS.items()}
    CorpusPassage.objects.bulk_create(
        CorpusPassage(campaign=campaign, docid=f"d{n}", text=CORPUS_TEXT.format(n=n))
        for n in range(1, 10))
    runs = {}
    for (team, name), ranking in RUNS.items():
        run = Run.objects.create(
            track=track, team=Team.objects.get(campaign=campaign, name=team), name=name,
            sha256=hashlib.sha256(name.encode()).hexdigest(), size=1,
            status=RunStatus.GRADED, is_current=True, graded_at=timezone.now())
        RankedPassage.objects.bulk_create(
            RankedPassage(run=run, qid=qid, rank=rank, docid=docid, score=10.0 - rank)
            for qid, docids in ranking.items() for rank, docid in enumerate(docids, 1))
        runs[name] = run
    judgments = {}
    for qid, passages in GRADES.items():
        for docid, by_letter in passages.items():
            for letter, grade in by_letter.items():
                item = items[letter]
                judgment = Judgment.objects.create(
                    campaign=campaign, kind=JudgmentKind.RUBRIC, judge_model=JUDGE_MODEL,
                    prompt_version=PROMPT_VERSION,
                    input_hash=hashlib.sha256(f"{docid}|{item.text_hash}".encode()).hexdigest(),
                    input={"passage": docid, "item": item.text}, status=JudgmentStatus.DONE,
                    llm_label={"grade": grade, "answer": f"{docid} on {letter}"})
                PassageItemGrade.objects.create(campaign=campaign, qid=qid, docid=docid,
                                                item=item, item_text_hash=item.text_hash,
                                                judgment=judgment)
                judgments[docid, letter] = judgment
    return RubricCase(track=track, items=items, runs=runs, judgments=judgments)
