"""Types shared by the measure modules: qrels, rankings and per-question scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# qid -> document id (for R2C2 a PassageKey "RUN:RANK") -> grade. Absent documents are
# nonrelevant, as in trec_eval.
Qrels = Mapping[str, Mapping[str, int]]

# qid -> document ids in rank order (for R2C2: PassageRank 1, 2, ...).
Rankings = Mapping[str, Sequence[str]]

NO_RELEVANT_DOCUMENTS = "the measure is undefined for a question without relevant documents"
DUPLICATE_DOCUMENT = "question {qid}: document {docid} is ranked more than once"
BAD_CUTOFF = "a cutoff must be a positive integer, got {cutoff!r}"


@dataclass(frozen=True)
class QuestionScores:
    """One measure of one run: its mean and exactly the per-question values it averages (for
    ranking measures every question with a relevant document, an unanswered one scoring 0)."""

    mean: float
    per_question: Mapping[str, float]

    @classmethod
    def from_values(cls, per_question: Mapping[str, float]) -> QuestionScores:
        """Average per-question values (0.0 when there are none: nothing to score)."""
        values = dict(per_question)
        mean = sum(values.values()) / len(values) if values else 0.0
        return cls(mean=mean, per_question=values)


def check_cutoff(cutoff: int) -> int:
    """Return `cutoff` if it is a positive int, else raise ValueError."""
    if isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1:
        raise ValueError(BAD_CUTOFF.format(cutoff=cutoff))
    return cutoff


def relevant_questions(qrels: Qrels) -> list[str]:
    """Questions with at least one relevant (grade >= 1) document, sorted: those ranking
    measures are averaged over, as trec_eval and NTCIREVAL do."""
    return sorted(qid for qid, judged in qrels.items() if any(g >= 1 for g in judged.values()))


def check_unique_documents(qid: str, ranking: Sequence[str]) -> None:
    """Raise ValueError if a document occurs twice in one question's ranking."""
    seen: set[str] = set()
    for docid in ranking:
        if docid in seen:
            raise ValueError(DUPLICATE_DOCUMENT.format(qid=qid, docid=docid))
        seen.add(docid)
