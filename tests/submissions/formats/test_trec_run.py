from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path

import pytest
import pytrec_eval

from scoring.measures.ranking import trec_ndcg_cut
from submissions.formats.common import BAD_INTEGER, EMPTY_FILE, INVALID_UTF8, Problem
from submissions.formats.control_characters import CONTROL_CHARACTER, NO_CONTROLS_BUT_TAB
from submissions.formats.trec_run import (
    BAD_SCORE,
    DOCID_BATCH_SIZE,
    DUPLICATE_DOCID,
    MAX_TREC_RANK,
    TAG_CHANGED,
    TREC_FIELD_COUNT,
    UNKNOWN_DOCID,
    UNKNOWN_QUERY,
    RubricRunName,
    TrecRunRecord,
    missing_from,
    parse_rubric_run_name,
    parse_trec_run,
    trec_eval_order,
    write_trec_run,
)
from tests.submissions.formats.support import TrickleReader, bio

TREC_EVAL = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
CORPUS = frozenset({"d1", "d2", "d3", "d4", "d5"})


def test_it_ranks_each_query_by_score_not_by_the_rank_column_or_the_file_order() -> None:
    run = parse_trec_run(
        bio(
            "q1 Q0 d1 1 0.5 bm25\n"
            "q1 Q0 d2 2 3.0 bm25\n"
            "q2 Q0 d3 1 -1e-3 bm25\n"
            "q1 Q0 d3 3 1.25 bm25\n"
            "q2 Q0 d1 2 -2 bm25\n"
        )
    )

    assert run.ok
    assert run.tag == "bm25"
    assert run.docids() == {"q1": ["d2", "d3", "d1"], "q2": ["d3", "d1"]}
    assert run.rankings["q1"][0] == TrecRunRecord("q1", "d2", 2, 3.0)


def test_tied_scores_are_broken_by_docid_descending_as_trec_eval_does() -> None:
    run = parse_trec_run(bio("q Q0 a 1 1.0 t\nq Q0 c 2 1 t\nq Q0 b 3 1.00 t\nq Q0 z 4 0.5 t\n"))

    assert run.docids() == {"q": ["c", "b", "a", "z"]}


def trec_eval_positions(scores: dict[str, float]) -> dict[str, int]:
    """Where trec_eval ranks each document: 1 / its recip_rank when it alone is relevant."""
    positions = {}
    for docid in scores:
        evaluator = pytrec_eval.RelevanceEvaluator({"q": {docid: 1}}, {"recip_rank"})
        positions[docid] = round(1 / evaluator.evaluate({"q": scores})["q"]["recip_rank"])
    return positions


def test_our_order_is_the_order_trec_eval_itself_ranks_in() -> None:
    # Ties between ASCII and non-ASCII docids: strcmp compares UTF-8 bytes, which keep
    # the order of code points ("é" after "z").
    lines = [
        ("doc-10", "2.5"),
        ("doc-9", "2.5"),
        ("\u00e9t\u00e9", "2.5"),
        ("zulu", "2.5"),
        ("alpha", "7"),
        ("omega", "-1"),
        ("doc-2", "2.50"),
    ]
    text = "".join(f"q Q0 {docid} {rank} {score} t\n" for rank, (docid, score) in enumerate(lines))

    run = parse_trec_run(bio(text))

    ours = {docid: rank for rank, docid in enumerate(run.docids()["q"], start=1)}
    assert ours == trec_eval_positions({docid: float(score) for docid, score in lines})


def test_trec_evals_own_test_run_scores_as_trec_eval_scored_it() -> None:
    # results.test is out of score order; out.test.aq.ndcg_cut is what trec_eval printed
    # for it (tests/data/trec_eval, from trec_eval's test suite).
    qrels: dict[str, dict[str, int]] = {}
    for line in (TREC_EVAL / "qrels.test").read_text().splitlines():
        qid, _iteration, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    expected = {}
    for line in (TREC_EVAL / "out.test.aq.ndcg_cut").read_text().splitlines():
        measure, qid, value = line.split()
        expected[(measure, qid)] = float(value)

    run = parse_trec_run(io.BytesIO((TREC_EVAL / "results.test").read_bytes()))

    assert run.ok
    assert run.tag == "STANDARD"
    scores = trec_ndcg_cut(
        {qid: qrels[qid] for qid in run.rankings}, run.docids(), cutoffs=(10, 20)
    )
    for k in (10, 20):
        for qid in run.rankings:
            assert round(scores[k].per_question[qid], 4) == expected[(f"ndcg_cut_{k}", qid)]


def test_it_skips_blank_and_comment_lines_and_takes_any_q0_and_tabs() -> None:
    run = parse_trec_run(
        bio("# a comment\n\n  \t\nq1\t0\td1 7 1 t\r\n   # indented\nq1 iter d2 0 2 t")
    )

    assert run.ok
    assert run.docids() == {"q1": ["d2", "d1"]}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("q1 Q0 d1 1 1.0", Problem(1, "line", TREC_FIELD_COUNT.format(5))),
        ("q1 Q0 d1 1 1.0 t extra", Problem(1, "line", TREC_FIELD_COUNT.format(7))),
        (
            "q1 Q0 d1 first 1.0 t",
            Problem(1, "rank", BAD_INTEGER.format("rank", "first", 0, MAX_TREC_RANK)),
        ),
        (
            "q1 Q0 d1 -1 1.0 t",
            Problem(1, "rank", BAD_INTEGER.format("rank", "-1", 0, MAX_TREC_RANK)),
        ),
        (
            "q1 Q0 d1 1.5 1.0 t",
            Problem(1, "rank", BAD_INTEGER.format("rank", "1.5", 0, MAX_TREC_RANK)),
        ),
        ("q1 Q0 d1 1 high t", Problem(1, "score", BAD_SCORE.format("high"))),
        ("q1 Q0 d1 1 nan t", Problem(1, "score", BAD_SCORE.format("nan"))),
        ("q1 Q0 d1 1 inf t", Problem(1, "score", BAD_SCORE.format("inf"))),
        ("q1 Q0 d1 1 1e999 t", Problem(1, "score", BAD_SCORE.format("1e999"))),
        ("q1 Q0 d1 1 0x1p3 t", Problem(1, "score", BAD_SCORE.format("0x1p3"))),
        ("q1 Q0 d1 1 1.5x t", Problem(1, "score", BAD_SCORE.format("1.5x"))),
        (
            "q1 Q0 d\x001 1 1 t",
            Problem(1, "line", CONTROL_CHARACTER.format(0, 8, NO_CONTROLS_BUT_TAB)),
        ),
        (
            "q1 Q0 d1\x0b1 1 t",
            Problem(1, "line", CONTROL_CHARACTER.format(11, 9, NO_CONTROLS_BUT_TAB)),
        ),
        (b"q1 Q0 d\xff 1 1 t", Problem(1, "line", INVALID_UTF8.format("0xFF", 8))),
    ],
)
def test_each_bad_line_is_reported_with_its_line_and_field(
    line: str | bytes, problem: Problem
) -> None:
    run = parse_trec_run(bio(line))

    assert run.problems == [problem]
    assert run.rankings == {}


def test_it_accepts_the_spellings_of_a_score_that_atof_reads() -> None:
    text = "".join(
        f"q Q0 d{i} 1 {score} t\n"
        for i, score in enumerate(["1", "-2.", ".5", "+3e2", "4E-1", "007"])
    )

    run = parse_trec_run(bio(text))

    assert run.ok
    assert [record.score for record in run.rankings["q"]] == [300.0, 7.0, 1.0, 0.5, 0.4, -2.0]


def test_a_tag_that_changes_is_reported_against_the_first_one() -> None:
    run = parse_trec_run(bio("bad line\nq Q0 d1 1 1 runA\nq Q0 d2 2 0 runB\n"))

    assert run.tag == "runA"
    assert run.problems == [
        Problem(1, "line", TREC_FIELD_COUNT.format(2)),
        Problem(3, "tag", TAG_CHANGED.format("runB", "runA", 2)),
    ]


def test_a_docid_twice_in_a_query_is_an_error_but_in_two_queries_is_not() -> None:
    run = parse_trec_run(bio("q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n"))

    assert run.problems == [Problem(3, "docid", DUPLICATE_DOCID.format("d1", "q1", 1))]
    assert run.docids() == {"q1": ["d1"], "q2": ["d1"]}


def test_unknown_queries_and_docids_are_reported_on_every_line_they_appear() -> None:
    run = parse_trec_run(
        bio("q1 Q0 d1 1 2 t\nq7 Q0 d1 1 2 t\nq1 Q0 x9 2 1 t\nq2 Q0 x9 1 1 t\n"),
        known_qids={"q1", "q2"},
        missing_docids=missing_from(CORPUS),
    )

    assert run.problems == [
        Problem(2, "qid", UNKNOWN_QUERY.format("q7")),
        Problem(3, "docid", UNKNOWN_DOCID.format("x9")),
        Problem(4, "docid", UNKNOWN_DOCID.format("x9")),
    ]
    assert run.docids() == {"q1": ["d1"]}


def test_the_corpus_is_asked_about_docids_in_batches_of_distinct_ones() -> None:
    asked: list[list[str]] = []

    def missing(docids: Sequence[str]) -> set[str]:
        asked.append(list(docids))
        return {docid for docid in docids if docid.endswith("7")}

    count = DOCID_BATCH_SIZE + 10
    text = "".join(f"q{q} Q0 d{i} 1 {i} t\n" for i in range(count) for q in (1, 2))
    run = parse_trec_run(bio(text), missing_docids=missing)

    assert [len(batch) for batch in asked] == [DOCID_BATCH_SIZE, 10]
    assert sorted(docid for batch in asked for docid in batch) == sorted(
        f"d{i}" for i in range(count)
    )
    unknown = [p for p in run.problems if p.field == "docid"]
    assert len(unknown) == 2 * len([i for i in range(count) if str(i).endswith("7")])


def test_every_problem_of_a_file_is_reported_in_line_order() -> None:
    run = parse_trec_run(
        bio("q1 Q0 zz 1 x t\nq1 Q0 d1 y 1 u\n"),
        known_qids={"q1"},
        missing_docids=missing_from(CORPUS),
    )

    assert run.problems == [
        Problem(1, "score", BAD_SCORE.format("x")),
        Problem(1, "docid", UNKNOWN_DOCID.format("zz")),
        Problem(2, "rank", BAD_INTEGER.format("rank", "y", 0, MAX_TREC_RANK)),
        Problem(2, "tag", TAG_CHANGED.format("u", "t", 1)),
    ]


@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n"])
def test_a_file_without_run_lines_is_empty(content: str) -> None:
    run = parse_trec_run(bio(content))

    assert run.problems == [Problem(0, "file", EMPTY_FILE.format("run line"))]
    assert run.tag is None


def test_a_written_run_reads_back_in_trec_eval_order_whatever_the_read_size() -> None:
    records = [
        TrecRunRecord("q1", "d1", 1, 0.1),
        TrecRunRecord("q1", "d2", 2, 1e-17),
        TrecRunRecord("q2", "d3", 1, -5.0),
        TrecRunRecord("q1", "d4", 3, 1e16),
    ]
    out = io.StringIO()
    write_trec_run(records, "my_run", out)

    run = parse_trec_run(TrickleReader(out.getvalue().encode(), 3))

    assert out.getvalue().splitlines()[1] == "q1 Q0 d2 2 1e-17 my_run"
    assert run.ok
    assert run.rankings == {
        "q1": trec_eval_order(r for r in records if r.qid == "q1"),
        "q2": [records[2]],
    }


@pytest.mark.parametrize("score", [0.1, 1e-300, 5e-324, 1.7976931348623157e308, -0.0, 1 / 3])
def test_a_written_score_reads_back_as_the_same_float(score: float) -> None:
    out = io.StringIO()
    write_trec_run([TrecRunRecord("q", "d", 1, score)], "t", out)

    read = parse_trec_run(bio(out.getvalue())).rankings["q"][0].score

    assert read == score
    assert math.copysign(1, read) == math.copysign(1, score)


@pytest.mark.parametrize(
    ("record", "tag"),
    [
        (TrecRunRecord("q 1", "d1", 1, 1.0), "t"),
        (TrecRunRecord("q1", "d\t1", 1, 1.0), "t"),
        (TrecRunRecord("q1", "", 1, 1.0), "t"),
        (TrecRunRecord("#q1", "d1", 1, 1.0), "t"),
        (TrecRunRecord("q1", "d1", 1, float("nan")), "t"),
        (TrecRunRecord("q1", "d1", 1, 1.0), "my tag"),
    ],
)
def test_the_writer_refuses_what_would_not_read_back(record: TrecRunRecord, tag: str) -> None:
    with pytest.raises(ValueError):
        write_trec_run([record], tag, io.StringIO())


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("WASEDA-bm25_v2", RubricRunName("WASEDA", "bm25_v2")),
        ("NTT-DOCOMO-run1", RubricRunName("NTT-DOCOMO", "run1")),
        ("T-" + "a" * 32, RubricRunName("T", "a" * 32)),
        ("T-" + "a" * 33, None),
        ("T-", None),
        ("-label", None),
        ("T-bad-label!", None),
        ("T-l\u00e4bel", None),
        ("T:1-label", None),
        ("T 1-label", None),
        ("Tlabel", None),
    ],
)
def test_a_run_name_is_team_dash_a_label_of_letters_digits_and_underscores(
    name: str, parsed: RubricRunName | None
) -> None:
    assert parse_rubric_run_name(name) == parsed
    if parsed is not None:
        assert str(parsed) == name
