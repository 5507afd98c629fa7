"""Res files: a PR run's PassageKeys in rank order, in trec_eval's run format, with a
score that makes trec_eval keep the PassageRank order (docs/formats.md)."""

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
    """Write the res file of PR run `run_name`: questions in first-seen order, passages by
    rank, tag defaulting to the run name; ValueError for a rank out of range or a bad name."""
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
