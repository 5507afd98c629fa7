from __future__ import annotations

import io
import re

import pytest
import pytrec_eval

from submissions.formats.pr_run import PassageRecord, parse_pr_run
from submissions.formats.qrels import parse_pr_qrels
from submissions.formats.res import res_score, write_pr_res
from tests.submissions.formats.support import bio, example_bytes


def res_text(records: list[PassageRecord], run_name: str, run_tag: str | None = None) -> str:
    out = io.StringIO()
    write_pr_res(records, run_name, out, run_tag=run_tag)
    return out.getvalue()


def test_it_writes_the_passage_keys_of_a_run_in_trec_run_format() -> None:
    records = parse_pr_run(bio(example_bytes("WASEDA-PO-1"))).records
    assert res_text(records, "WASEDA-PO-1") == (
        "D001 Q0 WASEDA-PO-1:1 1 20 WASEDA-PO-1\n"
        "D001 Q0 WASEDA-PO-1:2 2 19 WASEDA-PO-1\n"
        "D001 Q0 WASEDA-PO-1:3 3 18 WASEDA-PO-1\n"
        "D002 Q0 WASEDA-PO-1:1 1 20 WASEDA-PO-1\n"
        "D002 Q0 WASEDA-PO-1:2 2 19 WASEDA-PO-1\n"
        "D003 Q0 WASEDA-PO-1:1 1 20 WASEDA-PO-1\n"
        "D003 Q0 WASEDA-PO-1:2 2 19 WASEDA-PO-1\n"
    )


def test_it_writes_each_question_in_rank_order_whatever_the_file_order() -> None:
    records = [PassageRecord("D002", rank, "d", "t") for rank in (3, 1, 2)]
    records.insert(1, PassageRecord("D001", 5, "d", "t"))
    assert res_text(records, "KYOTO-PG-2", run_tag="kyoto") == (
        "D002 Q0 KYOTO-PG-2:1 1 20 kyoto\n"
        "D002 Q0 KYOTO-PG-2:2 2 19 kyoto\n"
        "D002 Q0 KYOTO-PG-2:3 3 18 kyoto\n"
        "D001 Q0 KYOTO-PG-2:5 5 16 kyoto\n"
    )


@pytest.mark.parametrize(("rank", "score"), [(1, 20), (2, 19), (20, 1)])
def test_the_score_falls_as_the_rank_grows(rank: int, score: int) -> None:
    assert res_score(rank) == score


@pytest.mark.parametrize("rank", [0, 21])
def test_it_refuses_a_rank_outside_1_to_max_rank(rank: int) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(f"rank {rank} is outside 1..20") + "$"):
        res_score(rank)


def test_it_takes_the_largest_rank_from_max_rank() -> None:
    assert res_score(5, max_rank=5) == 1
    with pytest.raises(ValueError, match="^" + re.escape("rank 6 is outside 1..5") + "$"):
        res_score(6, max_rank=5)


def test_trec_eval_ranks_the_passages_in_passage_rank_order() -> None:
    # Rank 1 of D001 is the only relevant passage: nDCG@1 is 1 only if it comes first.
    qrels = {"D001": {"WASEDA-PO-1:1": 1}}
    run: dict[str, dict[str, float]] = {}
    records = parse_pr_run(bio(example_bytes("WASEDA-PO-1"))).records
    for line in res_text(records, "WASEDA-PO-1").splitlines():
        qid, _, doc, _, score, _ = line.split(" ")
        run.setdefault(qid, {})[doc] = float(score)
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.1"}).evaluate(run)
    assert scores["D001"]["ndcg_cut_1"] == 1.0


def test_res_documents_are_the_passage_keys_of_the_qrels() -> None:
    qrels = parse_pr_qrels(bio(example_bytes("pr.qrels"))).records
    records = parse_pr_run(bio(example_bytes("WASEDA-PO-1"))).records
    res_docs = {line.split(" ")[2] for line in res_text(records, "WASEDA-PO-1").splitlines()}
    qrels_docs = {str(r.passage_key) for r in qrels if r.passage_key.run_name == "WASEDA-PO-1"}
    assert qrels_docs <= res_docs
