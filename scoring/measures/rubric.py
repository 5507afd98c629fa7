"""RUBRIC / EXAM++ autograding measures.

Each query has a test bank of items (exam questions or nuggets); an LLM self-rates how
well a passage answers each item on a 0..5 scale. From those grades:
- a relevance label per passage: the highest grade over the items ("max"), or the
  number of items graded at least t ("count");
- Rubric-Qrels: those labels as a trec_eval qrels file;
- Rubric-Cover@k: the fraction of the query's items that some passage in the top k
  grades at least t.

Sources: Farzi & Dietz, "Pencils Down! Automatic Rubric-based Evaluation of
Retrieve/Generate Systems", ICTIR 2024, section 3 (grading, Rubric-Qrels, Rubric-Cover);
Dietz, "A Workbench for Autograding Retrieve/Generate Systems", SIGIR 2024, section 3;
Farzi & Dietz, "EXAM++: LLM-based Answerability Metrics for IR Evaluation", LLM4Eval
2024. The threshold t defaults to 4, as in the workbench's Autograde-Cover setting
(an item counts as answered when a passage's self-rating is >= 4).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from enum import StrEnum

from .common import QuestionScores, check_cutoff, check_unique_documents

MAX_GRADE = 5
DEFAULT_MIN_GRADE = 4

BAD_GRADE = "a self-rated grade must be an integer 0..5, got {grade!r}"
BAD_MIN_GRADE = "the grade threshold must be an integer 1..5, got {grade!r}"
NO_ITEMS = "the Rubric-Cover of a query without test-bank items is undefined"
UNKNOWN_ITEM = "passage {passage} is graded on {item!r}, which is not in the test bank"

# passage id -> test-bank item id -> self-rated grade 0..5 (one query)
ItemGrades = Mapping[str, Mapping[str, int]]


class LabelRule(StrEnum):
    """How a passage's item grades become one relevance label."""

    MAX = "max"  # highest grade over the items, 0..5
    COUNT = "count"  # number of items graded >= t


def rubric_label(
    item_grades: Mapping[str, int],
    *,
    rule: LabelRule | str = LabelRule.MAX,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> int:
    """A passage's relevance label from its grades on the query's items.

    "max": the highest grade (0 if ungraded); "count": how many items have grade >=
    `min_grade`. Source: Farzi & Dietz, "Pencils Down!", ICTIR 2024, section 3.
    """
    rule = LabelRule(rule)
    _check_min_grade(min_grade)
    grades = [_check_grade(grade) for grade in item_grades.values()]
    if rule is LabelRule.MAX:
        return max(grades, default=0)
    return sum(1 for grade in grades if grade >= min_grade)


def rubric_qrels(
    grades: Mapping[str, ItemGrades],
    *,
    rule: LabelRule | str = LabelRule.MAX,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> dict[str, dict[str, int]]:
    """Rubric-Qrels: qid -> passage id -> label, for every graded passage (label 0 too,
    so trec_eval counts it as judged). Sorted by qid and passage id."""
    return {
        qid: {
            passage: rubric_label(grades[qid][passage], rule=rule, min_grade=min_grade)
            for passage in sorted(grades[qid])
        }
        for qid in sorted(grades)
    }


def rubric_qrels_lines(qrels: Mapping[str, Mapping[str, int]]) -> list[str]:
    """trec_eval qrels lines `qid 0 docid label`, sorted by qid then docid."""
    return [
        f"{qid} 0 {docid} {qrels[qid][docid]}"
        for qid in sorted(qrels)
        for docid in sorted(qrels[qid])
    ]


def rubric_cover_at_k(
    ranking: Sequence[str],
    grades: ItemGrades,
    items: Collection[str],
    *,
    k: int,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> float:
    """Rubric-Cover@k: fraction of the query's test-bank `items` that at least one of
    the top-k passages of `ranking` grades >= `min_grade`.

    Ungraded passages and items count as grade 0. Source: Farzi & Dietz, "Pencils
    Down!", ICTIR 2024, section 3 (Rubric-Cover, after the EXAM answerability cover).
    """
    check_cutoff(k)
    _check_min_grade(min_grade)
    bank = set(items)
    if not bank:
        raise ValueError(NO_ITEMS)
    covered: set[str] = set()
    for passage in ranking[:k]:
        for item, grade in grades.get(passage, {}).items():
            if item not in bank:
                raise ValueError(UNKNOWN_ITEM.format(passage=passage, item=item))
            if _check_grade(grade) >= min_grade:
                covered.add(item)
    return len(covered) / len(bank)


def rubric_cover_run(
    *,
    rankings: Mapping[str, Sequence[str]],
    grades: Mapping[str, ItemGrades],
    items: Mapping[str, Collection[str]],
    k: int,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> QuestionScores:
    """Mean Rubric-Cover@k of one run over the queries that have test-bank items; a
    query the run did not answer scores 0."""
    per_query: dict[str, float] = {}
    for qid in sorted(q for q, bank in items.items() if bank):
        ranking = rankings.get(qid, ())
        check_unique_documents(qid, ranking)
        per_query[qid] = rubric_cover_at_k(
            ranking, grades.get(qid, {}), items[qid], k=k, min_grade=min_grade
        )
    return QuestionScores.from_values(per_query)


def _check_grade(grade: int) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= MAX_GRADE:
        raise ValueError(BAD_GRADE.format(grade=grade))
    return grade


def _check_min_grade(grade: int) -> None:
    if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
        raise ValueError(BAD_MIN_GRADE.format(grade=grade))
