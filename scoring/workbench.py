"""Graded passages in the Autograding Workbench's data model (Dietz, SIGIR 2024, section 3),
pure, no Django, so that workbench users can take our grades to its tools. The fields:
docs/results.md, "The workbench's data model"."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: The workbench's prompt types, by test-bank target (its NuggetPrompt / QuestionPrompt).
PROMPT_TYPE = {"questions": "question", "nuggets": "nugget"}
ID_KEY = {"questions": "question_id", "nuggets": "nugget_id"}


@dataclass(frozen=True)
class ItemGrade:
    """A passage's counted grade on one test-bank item (an organiser's edit winning)."""

    item_id: str
    target: str  # "questions" or "nuggets"
    grade: int
    answer: str  # the extracted answer or mention, kept for verification
    judge_model: str
    prompt_version: str
    edited: bool


@dataclass(frozen=True)
class SystemRank:
    run: str
    rank: int
    score: float | None  # None: a response's segment, ordered by its place alone


@dataclass(frozen=True)
class GradedParagraph:
    docid: str
    text: str
    rankings: Sequence[SystemRank]
    grades: Sequence[ItemGrade]
    label: int | None  # its Rubric-Qrels label; None if it has no grade


def _ranking_entry(qid: str, docid: str, system: SystemRank) -> dict[str, Any]:
    # The workbench's ranking entries need a score. A response's segment has none; the
    # reciprocal of its place keeps the order a score would give.
    score = system.score if system.score is not None else 1.0 / system.rank
    return {"method": system.run, "paragraphId": docid, "queryId": qid,
            "rank": system.rank, "score": score}


def _exam_grades(grades: Sequence[ItemGrade], *, min_grade: int,
                 label: int | None) -> list[dict[str, Any]]:
    """One workbench ExamGrades per (judge model, prompt version, target), as the
    workbench keeps one per LLM and prompt class."""
    groups: dict[tuple[str, str, str], list[ItemGrade]] = {}
    for grade in grades:
        groups.setdefault((grade.judge_model, grade.prompt_version, grade.target),
                          []).append(grade)
    exam_grades = []
    for (model, version, target), group in sorted(groups.items()):
        answered = [g.item_id for g in group if g.grade >= min_grade]
        entry: dict[str, Any] = {
            "correctAnswered": answered,
            "wrongAnswered": [g.item_id for g in group if g.grade < min_grade],
            "answers": [[g.item_id, g.answer] for g in group],
            "self_ratings": [{ID_KEY.get(target, "question_id"): g.item_id,
                              "self_rating": g.grade} for g in group],
            "llm": model,
            "llm_options": {"prompt_version": version, "min_grade": min_grade,
                            # where an organiser's post-edit replaced the judge's grade
                            "edited": [g.item_id for g in group if g.edited]},
            "prompt_info": {"prompt_class": version, "is_self_rated": True},
            "prompt_type": PROMPT_TYPE.get(target, target),
            "exam_ratio": len(answered) / len(group),
        }
        if label is not None:
            entry["relevance_label"] = label
        exam_grades.append(entry)
    return exam_grades


def workbench_paragraph(qid: str, paragraph: GradedParagraph, *,
                        min_grade: int) -> dict[str, Any]:
    """One passage as a workbench FullParagraphData (no manual judgments)."""
    shaped: dict[str, Any] = {
        "paragraph_id": paragraph.docid,
        "text": paragraph.text,
        "paragraph_data": {
            "judgments": [],
            "rankings": [_ranking_entry(qid, paragraph.docid, system)
                         for system in paragraph.rankings],
        },
    }
    if paragraph.grades:
        shaped["exam_grades"] = _exam_grades(paragraph.grades, min_grade=min_grade,
                                             label=paragraph.label)
    return shaped


def workbench_line(qid: str, paragraphs: Iterable[GradedParagraph], *,
                   min_grade: int) -> str:
    """One query as a workbench JSONL line (a QueryWithFullParagraphList), newline
    included."""
    return json.dumps([qid, [workbench_paragraph(qid, p, min_grade=min_grade)
                             for p in paragraphs]], ensure_ascii=False) + "\n"
