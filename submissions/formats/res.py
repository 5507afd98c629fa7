"""Res files: one per PR run, its PassageKeys in rank order, in TREC run format.

docs/formats.md: a res file per PR run lists its PassageKeys in rank order. Each line is
``qid Q0 RUN:RANK rank score runtag``, the format trec_eval and pytrec_eval read; the
document id ``RUN:RANK`` is the PassageKey, as in the derived qrels (`qrels`).

trec_eval ignores the rank column and orders a question's documents by descending score
(breaking ties by document id), so the score must carry the order: score =
``max_rank + 1 - rank`` gives 20 for rank 1 down to 1 for rank 20, all distinct, so the
evaluated ranking is exactly the PassageRank order.
"""

from __future__ import annotations

from collections.abc import Iterable

from .common import PassageKey, TextSink, check_writable
from .pr_run import DEFAULT_MAX_RANK, PassageRecord


def res_score(rank: int, max_rank: int = DEFAULT_MAX_RANK) -> int:
    """The score written for `rank`: higher for better ranks, always at least 1."""
    if not 1 <= rank <= max_rank:
        raise ValueError(f"rank {rank} is outside 1..{max_rank}")
    return max_rank + 1 - rank


def write_pr_res(
    records: Iterable[PassageRecord],
    run_name: str,
    text_file: TextSink,
    *,
    run_tag: str | None = None,
    max_rank: int = DEFAULT_MAX_RANK,
) -> None:
    """Write the res file of PR run `run_name` from its passages.

    Questions come in the order they first appear in `records`, each one's passages in
    rank order. `run_tag` (the last column) defaults to the run name. Raises ValueError
    for a rank outside 1..max_rank or white space in the names.
    """
    tag = run_name if run_tag is None else run_tag
    check_writable(run_name, "run name", separator=" ")
    check_writable(tag, "run tag", separator=" ")
    ranks_by_qid: dict[str, list[int]] = {}
    for record in records:
        check_writable(record.qid, "qID", separator=" ")
        ranks_by_qid.setdefault(record.qid, []).append(record.rank)
    for qid, ranks in ranks_by_qid.items():
        for rank in sorted(ranks):
            key = PassageKey(run_name, rank)
            text_file.write(f"{qid} Q0 {key} {rank} {res_score(rank, max_rank)} {tag}\n")
