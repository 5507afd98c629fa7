"""RUBRIC / EXAM++ measures: labels and Rubric-Qrels from self-rated grades, trec_eval on
them, Rubric-Cover@k, n-EXAM and the meta-evaluation (Farzi and Dietz, ICTIR 2024; Sander
and Dietz, DESIRES 2021; Dietz, SIGIR 2024; docs/measures.md)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .catalogue import rubric_cover_name
from .common import Qrels, QuestionScores, Rankings, check_cutoff, check_unique_documents
from .ranking import trec_eval_results, trec_ndcg_cut
from .stats import cohen_kappa, kendall_tau, spearman_rho

MAX_GRADE = 5
DEFAULT_MIN_GRADE = 4
DEFAULT_COVER_K = 10

BAD_GRADE = "a self-rated grade must be an integer 0..5, got {grade!r}"
BAD_MIN_GRADE = "the grade threshold must be an integer 1..5, got {grade!r}"
BAD_LEVEL = "a relevance level must be a positive integer, got {level!r}"
NO_ITEMS = "the Rubric-Cover of a query without test-bank items is undefined"
UNKNOWN_ITEM = "passage {passage} is graded on {item!r}, which is not in the test bank"
NOT_IN_POOL = (
    "query {qid}: the run covers {items}, which the pool does not; pool every run of the "
    "track, this one included"
)
NO_COMMON_RUNS = "the leaderboards share {n} runs; at least two are needed to correlate them"
NO_COMMON_PASSAGES = "no passage is judged both by the Rubric grades and by the manual qrels"

# passage id -> test-bank item id -> self-rated grade 0..5 (one query)
ItemGrades = Mapping[str, Mapping[str, int]]
# qid -> passage id -> item id -> grade
Grades = Mapping[str, ItemGrades]


class LabelRule(StrEnum):
    """How a passage's item grades become one relevance label (a track's `label`)."""

    MAX = "max"  # highest grade over the items, 0..5
    COUNT = "count"  # number of items graded >= min_grade


def rubric_label(
    item_grades: Mapping[str, int],
    *,
    label: LabelRule | str = LabelRule.MAX,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> int:
    """A passage's label from its item grades: "max" the highest (0 if ungraded), "count" how
    many reach `min_grade`. Source: Farzi and Dietz, "Pencils Down!", ICTIR 2024, section 3."""
    rule = LabelRule(label)
    _check_min_grade(min_grade)
    grades = [_check_grade(grade) for grade in item_grades.values()]
    if rule is LabelRule.MAX:
        return max(grades, default=0)
    return sum(1 for grade in grades if grade >= min_grade)


def rubric_qrels(
    grades: Grades,
    *,
    label: LabelRule | str = LabelRule.MAX,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> dict[str, dict[str, int]]:
    """Rubric-Qrels: qid -> passage id -> label for every graded passage, sorted; label 0 is
    kept, so that trec_eval counts the passage as judged non-relevant, not as unjudged."""
    return {
        qid: {
            passage: rubric_label(grades[qid][passage], label=label, min_grade=min_grade)
            for passage in sorted(grades[qid])
        }
        for qid in sorted(grades)
    }


def rubric_qrels_lines(qrels: Mapping[str, Mapping[str, int]]) -> list[str]:
    """trec_eval qrels lines `qid 0 docid label`, sorted by qid then docid (as strings),
    so the same grades always give the same file."""
    return [
        f"{qid} 0 {docid} {qrels[qid][docid]}"
        for qid in sorted(qrels)
        for docid in sorted(qrels[qid])
    ]


def rubric_trec_measures(
    qrels: Qrels, rankings: Rankings, *, min_grade: int = DEFAULT_MIN_GRADE
) -> dict[str, QuestionScores]:
    """A run on Rubric-Qrels through pytrec_eval: nDCG@10 with the labels as gains; MAP, MRR and
    P@10 at relevance level `min_grade` (trec_eval `-l`), with `label: count` too. The queries
    each is averaged over: docs/measures.md."""
    _check_min_grade(min_grade)
    measures: dict[str, QuestionScores] = {"ndcg@10": trec_ndcg_cut(qrels, rankings,
                                                                      cutoffs=(10,))[10]}
    qids = sorted(q for q, judged in qrels.items()
                  if any(label >= min_grade for label in judged.values()))
    results = trec_eval_results(qrels, rankings, qids, {"map", "recip_rank", "P.10"},
                                relevance_level=min_grade)
    for key, trec_name in (("map", "map"), ("recip_rank", "recip_rank"), ("p@10", "P_10")):
        measures[key] = QuestionScores.from_values(
            {qid: float(results.get(qid, {}).get(trec_name, 0.0)) for qid in qids})
    return measures


def covered_items(
    ranking: Sequence[str],
    grades: ItemGrades,
    items: Collection[str],
    *,
    k: int | None,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> frozenset[str]:
    """The query's test-bank `items` that some passage in the top `k` of `ranking`
    grades at least `min_grade` (`k` None: the whole ranking, as for a response's
    segments). Ungraded passages and items count as grade 0."""
    if k is not None:
        check_cutoff(k)
    _check_min_grade(min_grade)
    bank = set(items)
    covered: set[str] = set()
    for passage in ranking if k is None else ranking[:k]:
        for item, grade in grades.get(passage, {}).items():
            if item not in bank:
                raise ValueError(UNKNOWN_ITEM.format(passage=passage, item=item))
            if _check_grade(grade) >= min_grade:
                covered.add(item)
    return frozenset(covered)


def rubric_cover_at_k(
    ranking: Sequence[str],
    grades: ItemGrades,
    items: Collection[str],
    *,
    k: int | None,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> float:
    """Rubric-Cover@k of one query: |items covered in the top k| / |items|. Source: Farzi and
    Dietz, "Pencils Down!", ICTIR 2024, section 3, after Sander and Dietz's EXAM cover."""
    if not set(items):
        raise ValueError(NO_ITEMS)
    covered = covered_items(ranking, grades, items, k=k, min_grade=min_grade)
    return len(covered) / len(set(items))


def rubric_cover_run(
    *,
    rankings: Rankings,
    grades: Grades,
    items: Mapping[str, Collection[str]],
    k: int | None = DEFAULT_COVER_K,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> QuestionScores:
    """Mean Rubric-Cover@k of one run over the queries that have test-bank items (the
    measure is undefined without); a query the run did not answer scores 0."""
    per_query: dict[str, float] = {}
    for qid in sorted(q for q, bank in items.items() if bank):
        ranking = rankings.get(qid, ())
        check_unique_documents(qid, ranking)
        per_query[qid] = rubric_cover_at_k(
            ranking, grades.get(qid, {}), items[qid], k=k, min_grade=min_grade)
    return QuestionScores.from_values(per_query)


def pooled_cover(
    *,
    runs: Iterable[Rankings],
    grades: Grades,
    items: Mapping[str, Collection[str]],
    k: int | None = DEFAULT_COVER_K,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> dict[str, frozenset[str]]:
    """qid -> the items that at least one of `runs` covers in its top `k`: n-EXAM's
    denominator. Every query with items is present, with an empty set if no run covers
    any of them."""
    pooled: dict[str, set[str]] = {qid: set() for qid, bank in items.items() if bank}
    for rankings in runs:
        for qid in pooled:
            pooled[qid] |= covered_items(rankings.get(qid, ()), grades.get(qid, {}),
                                         items[qid], k=k, min_grade=min_grade)
    return {qid: frozenset(pooled[qid]) for qid in sorted(pooled)}


def n_exam_run(
    *,
    rankings: Rankings,
    grades: Grades,
    items: Mapping[str, Collection[str]],
    pooled: Mapping[str, Collection[str]],
    k: int | None = DEFAULT_COVER_K,
    min_grade: int = DEFAULT_MIN_GRADE,
) -> QuestionScores:
    """Mean n-EXAM of one run: per query, items it covers in its top k / items some run of the
    pool covers (Sander and Dietz, DESIRES 2021). A query no run covers is left out, where the
    workbench scores it 0 (docs/measures.md)."""
    per_query: dict[str, float] = {}
    for qid in sorted(q for q, pool in pooled.items() if pool):
        ranking = rankings.get(qid, ())
        check_unique_documents(qid, ranking)
        covered = covered_items(ranking, grades.get(qid, {}), items.get(qid, ()),
                                k=k, min_grade=min_grade)
        outside = covered - set(pooled[qid])
        if outside:
            raise ValueError(NOT_IN_POOL.format(qid=qid, items=", ".join(sorted(outside))))
        per_query[qid] = len(covered) / len(set(pooled[qid]))
    return QuestionScores.from_values(per_query)


@dataclass(frozen=True)
class RubricRunScores:
    """Every leaderboard measure of one ranking or response run."""

    rubric_cover: QuestionScores
    n_exam: QuestionScores
    qrels_measures: Mapping[str, QuestionScores]  # "ndcg@10", "map", "recip_rank", "p@10"
    name_k: int  # the track's cover_k, which Rubric-Cover's key carries

    def by_measure(self) -> dict[str, QuestionScores]:
        """Every measure under its catalogue key (catalogue.py), in leaderboard order:
        Rubric-Cover's carrying the track's cover_k (`rubric_cover_name`)."""
        return {rubric_cover_name(self.name_k): self.rubric_cover, "n_exam": self.n_exam,
                **self.qrels_measures}

    def leaderboard_row(self) -> dict[str, float]:
        """The leaderboard columns, full precision."""
        return {key: scores.mean for key, scores in self.by_measure().items()}

    def per_question(self) -> dict[str, dict[str, float]]:
        """measure -> qid -> value, as a snapshot stores them."""
        return {key: dict(scores.per_question) for key, scores in self.by_measure().items()}


def score_rubric_run(
    *,
    rankings: Rankings,
    grades: Grades,
    items: Mapping[str, Collection[str]],
    qrels: Qrels,
    pooled: Mapping[str, Collection[str]],
    min_grade: int = DEFAULT_MIN_GRADE,
    cover_k: int | None = DEFAULT_COVER_K,
    name_k: int,
) -> RubricRunScores:
    """All leaderboard measures of one ranking or response run on the track's Rubric-Qrels and
    pooled cover, at `cover_k` (None for a response: all its segments); Rubric-Cover's key
    carries `name_k`, the track's cover_k."""
    return RubricRunScores(
        rubric_cover=rubric_cover_run(rankings=rankings, grades=grades, items=items,
                                      k=cover_k, min_grade=min_grade),
        n_exam=n_exam_run(rankings=rankings, grades=grades, items=items, pooled=pooled,
                          k=cover_k, min_grade=min_grade),
        qrels_measures=rubric_trec_measures(qrels, rankings, min_grade=min_grade),
        name_k=name_k,
    )


# --- Meta-evaluation against manual judgments (docs/rubric.md) ---


@dataclass(frozen=True)
class LeaderboardAgreement:
    """Rank correlation of the Rubric leaderboard with the official one, over the runs
    that both rank."""

    kendall_tau: float
    spearman: float
    runs: tuple[str, ...]

    def as_json(self) -> dict[str, float]:
        """The meta-evaluation API's shape: {"kendall_tau": x, "spearman": y}."""
        return {"kendall_tau": self.kendall_tau, "spearman": self.spearman}


def leaderboard_agreement(
    rubric: Mapping[str, float], official: Mapping[str, float]
) -> LeaderboardAgreement:
    """Kendall's tau-b and Spearman's rho (scipy; average ranks for ties) between two
    leaderboards (run -> score), over the runs in both; shared runs that all score the same
    have no ranking: an error, not a correlation of 0."""
    runs = sorted(set(rubric) & set(official))
    if len(runs) < 2:
        raise ValueError(NO_COMMON_RUNS.format(n=len(runs)))
    left = {run: rubric[run] for run in runs}
    right = {run: official[run] for run in runs}
    return LeaderboardAgreement(
        kendall_tau=kendall_tau(left, right).statistic,
        spearman=spearman_rho(left, right).statistic,
        runs=tuple(runs),
    )


def qrels_kappa(
    rubric: Qrels, manual: Qrels, *, min_grade: int = DEFAULT_MIN_GRADE,
    relevant_level: int = 1,
) -> float:
    """Cohen's kappa (Cohen, 1960; `stats.cohen_kappa`) between Rubric labels >= `min_grade`
    and manual labels >= `relevant_level`, over the (query, passage) pairs that both judge."""
    _check_min_grade(min_grade)
    _check_level(relevant_level)
    pairs = _common_passages(rubric, manual)
    return cohen_kappa([rubric[q][d] >= min_grade for q, d in pairs],
                       [manual[q][d] >= relevant_level for q, d in pairs])


def grade_judgment_table(rubric: Qrels, manual: Qrels) -> dict[str, dict[str, int]]:
    """{"GRADE": {"LEVEL": count}}: Rubric label x manual level over the passages both
    judge ("Pencils Down!", Table 5). Every label and level seen appears, as a string,
    in numeric order, with 0 for an empty cell, so the table is complete."""
    pairs = _common_passages(rubric, manual)
    labels = sorted({rubric[q][d] for q, d in pairs})
    levels = sorted({manual[q][d] for q, d in pairs})
    table = {str(label): {str(level): 0 for level in levels} for label in labels}
    for q, d in pairs:
        table[str(rubric[q][d])][str(manual[q][d])] += 1
    return table


def _common_passages(rubric: Qrels, manual: Qrels) -> list[tuple[str, str]]:
    pairs = sorted((qid, docid) for qid, judged in rubric.items() if qid in manual
                   for docid in judged if docid in manual[qid])
    if not pairs:
        raise ValueError(NO_COMMON_PASSAGES)
    return pairs


def _check_grade(grade: Any) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= MAX_GRADE:
        raise ValueError(BAD_GRADE.format(grade=grade))
    return grade


def _check_min_grade(grade: Any) -> None:
    if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
        raise ValueError(BAD_MIN_GRADE.format(grade=grade))


def _check_level(level: Any) -> None:
    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        raise ValueError(BAD_LEVEL.format(level=level))
