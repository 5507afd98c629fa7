"""Property-based tests of the RUBRIC formats, as for R2C2's:
any input gives problems, never an exception; writers round-trip; the segmenter and the
trec_eval order keep their promises on any input."""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cmp_to_key
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from submissions.formats.common import BinaryReader, Problem
from submissions.formats.corpus import CorpusPassage, iter_corpus, validate_corpus, write_corpus
from submissions.formats.response_run import (
    ResponseRecord,
    parse_response_run,
    write_response_run,
)
from submissions.formats.segmenter import segment_text
from submissions.formats.test_bank import (
    TARGET_NUGGETS,
    TARGET_QUESTIONS,
    BankItem,
    QueryBank,
    parse_test_bank,
    write_test_bank,
)
from submissions.formats.trec_run import (
    TrecRunRecord,
    missing_from,
    parse_trec_run,
    trec_eval_order,
    write_trec_run,
)
from tests.submissions.formats.support import TrickleReader, bio

T = TypeVar("T")
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
QIDS = frozenset({"q1", "q2"})


def problems_of(parser: str, binary_file: BinaryReader) -> tuple[object, list[Problem]]:
    """(what the parser read, its problems), for any of the four formats."""
    if parser == "trec":
        run = parse_trec_run(
            binary_file, known_qids=QIDS, missing_docids=missing_from({"d1", "d2"})
        )
        return (run.tag, run.rankings), run.problems
    if parser == "response":
        result = parse_response_run(binary_file, known_qids=QIDS)
        return result.records, result.problems
    if parser == "corpus":
        problems: list[Problem] = []
        return list(iter_corpus(binary_file, problems)), problems
    bank = parse_test_bank(binary_file, known_qids=QIDS)
    return bank.records, bank.problems


PARSERS = ["trec", "response", "corpus", "test bank"]
FRAGMENTS = [
    b"q1",
    b"q2",
    b"Q0",
    b"d1",
    b"1",
    b"-2.5e3",
    b" ",
    b"\t",
    b"\n",
    b"\r\n",
    b"#",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b'"',
    b'"qid"',
    b'"text"',
    b'"passages"',
    b'"docid"',
    b'"query_id"',
    b'"query_text"',
    b'"items"',
    b'"info"',
    b'"prompt_target"',
    b'"questions"',
    b'"nuggets"',
    b'"question_text"',
    b'"nugget_id"',
    b'"answers"',
    b'"gold_answers"',
    b"\\u0000",
    b"\\ud800",
    b"null",
    b"\x00",
    b"\xff",
    b"\xc3\xa9",
    b"\xef\xbb\xbf",
]
format_like_bytes = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join)
any_bytes = st.one_of(st.binary(max_size=2000), format_like_bytes)


@SETTINGS
@given(data=any_bytes, parser=st.sampled_from(PARSERS))
def test_any_bytes_give_problems_and_never_an_exception(data: bytes, parser: str) -> None:
    _, problems = problems_of(parser, bio(data))

    lines = data.count(b"\n") + 1
    for problem in problems:
        assert 0 <= problem.line <= lines
        assert problem.field
        assert problem.message.startswith("found ")


@SETTINGS
@given(data=any_bytes, step=st.integers(1, 50), parser=st.sampled_from(PARSERS))
def test_reading_does_not_depend_on_how_the_file_is_read(
    data: bytes, step: int, parser: str
) -> None:
    assert problems_of(parser, TrickleReader(data, step)) == problems_of(parser, bio(data))


# --- the trec_eval order ------------------------------------------------------------------------


# Ids (qids, docids, tags, item ids) the formats accept: no control characters, no white
# space, no lone surrogates.
ids = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cc", "Cs", "Zs", "Zl", "Zp"]),
    min_size=1,
    max_size=12,
).filter(lambda value: not any(c.isspace() for c in value))


def comp_sim_docno(a: TrecRunRecord, b: TrecRunRecord) -> int:
    """trec_eval's comparator (form_res_rels.c), transcribed: strcmp on the UTF-8 bytes."""
    if a.score > b.score:
        return -1
    if a.score < b.score:
        return 1
    x, y = b.docid.encode(), a.docid.encode()
    return (x > y) - (x < y)


qid_tokens = ids.filter(lambda qid: not qid.startswith("#"))
# Few distinct scores, so that ties (the docid decides) are common.
scores = st.one_of(
    st.sampled_from([0.0, 1.0, -1.5, 2.25]), st.floats(allow_nan=False, allow_infinity=False)
)


@st.composite
def trec_runs(draw: st.DrawFn) -> list[TrecRunRecord]:
    # Mostly two queries, so that each has several documents to order.
    qids = st.one_of(st.sampled_from(["q1", "q2"]), qid_tokens)
    keys = draw(st.lists(st.tuples(qids, ids), unique=True, min_size=1, max_size=30))
    return [
        TrecRunRecord(qid, docid, draw(st.integers(0, 10**6)), draw(scores)) for qid, docid in keys
    ]


def written(write: Callable[[list[T], io.StringIO], None], records: list[T]) -> str:
    out = io.StringIO()
    write(records, out)
    return out.getvalue()


@SETTINGS
@given(records=trec_runs(), tag=ids)
def test_a_written_trec_run_reads_back_in_trec_evals_order(
    records: list[TrecRunRecord], tag: str
) -> None:
    run = parse_trec_run(bio(written(lambda r, out: write_trec_run(r, tag, out), records)))

    assert run.ok
    assert run.tag == tag
    by_qid: dict[str, list[TrecRunRecord]] = {}
    for record in records:
        by_qid.setdefault(record.qid, []).append(record)
    assert run.rankings == {
        qid: sorted(qid_records, key=cmp_to_key(comp_sim_docno))
        for qid, qid_records in by_qid.items()
    }


@SETTINGS
@given(records=trec_runs())
def test_the_trec_eval_order_is_trec_evals_comparator(records: list[TrecRunRecord]) -> None:
    assert trec_eval_order(records) == sorted(records, key=cmp_to_key(comp_sim_docno))


# --- the segmenter ----------------------------------------------------------------------------

# Any characters a response may hold, in runs between white space and full stops, to make
# words and sentences. Control characters never reach the segmenter: the response format
# refuses them first, and sentencex panics on some (U+0085 before a
# no-break space: a byte offset inside a character).
any_text = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=5),
        st.sampled_from([" ", "  ", "\n", ". ", "? ", "\u3000", "\u00a0"]),
    ),
    max_size=200,
).map("".join)
plain_words = st.text("abcXYZ\u00e9\u65e5", min_size=1, max_size=6).flatmap(
    lambda word: st.sampled_from([word, word + ","])
)
separators = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \u3000 "])


@st.composite
def sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(plain_words, min_size=1, max_size=130))
    return draw(separators).join(words) + draw(st.sampled_from(".?!"))


@st.composite
def prose(draw: st.DrawFn) -> str:
    """Sentences of up to 130 words whose words only end in punctuation, so that no
    sentence boundary falls inside a word."""
    sentences = draw(st.lists(sentence(), max_size=8))
    return "".join(text + draw(separators) for text in sentences)


@SETTINGS
@given(text=any_text, max_words=st.one_of(st.integers(1, 5), st.integers(1, 120)))
def test_no_passage_is_longer_than_the_limit_and_no_character_is_lost(
    text: str, max_words: int
) -> None:
    passages = segment_text(text, max_words=max_words)

    assert all(1 <= len(passage.split()) <= max_words for passage in passages)
    assert all(passage == passage.strip() for passage in passages)
    assert "".join("".join(passage.split()) for passage in passages) == "".join(text.split())
    position = 0
    for passage in passages:  # each a piece of the text as written, in order
        position = text.index(passage, position) + len(passage)


@SETTINGS
@given(text=prose(), max_words=st.sampled_from([1, 3, 100]))
def test_the_passages_give_back_the_words_of_the_text(text: str, max_words: int) -> None:
    passages = segment_text(text, max_words=max_words)

    assert [word for passage in passages for word in passage.split()] == text.split()
    assert all(len(passage.split()) <= max_words for passage in passages)


# --- JSONL round trips --------------------------------------------------------------------------

# Texts the formats accept: not blank, no lone surrogates, tab and line breaks as their
# only control characters.
texts = st.text(
    st.one_of(
        st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]),
        st.sampled_from("\t\n\r"),
    ),
    min_size=1,
    max_size=40,
).filter(lambda value: bool(value.strip()))
short_texts = texts.filter(lambda value: len(value.split()) <= 100)


@st.composite
def response_runs(draw: st.DrawFn) -> list[ResponseRecord]:
    qids = draw(st.lists(ids, unique=True, min_size=1, max_size=6))
    return [
        ResponseRecord(
            qid,
            draw(texts),
            draw(st.one_of(st.none(), st.lists(short_texts, min_size=1, max_size=4).map(tuple))),
        )
        for qid in qids
    ]


@SETTINGS
@given(records=response_runs())
def test_a_written_response_run_reads_back_to_its_records(records: list[ResponseRecord]) -> None:
    result = parse_response_run(bio(written(write_response_run, records)))

    assert result.problems == []
    assert result.records == records


@SETTINGS
@given(docids=st.lists(ids, unique=True, min_size=1, max_size=20), data=st.data())
def test_a_written_corpus_reads_back_to_its_passages(
    docids: list[str], data: st.DataObject
) -> None:
    passages = [CorpusPassage(docid, data.draw(texts)) for docid in docids]
    content = written(write_corpus, passages).encode()
    problems: list[Problem] = []

    assert list(iter_corpus(bio(content), problems)) == passages
    assert problems == []
    assert validate_corpus(TrickleReader(content, 7)) == []


@st.composite
def bank_files(draw: st.DrawFn) -> list[QueryBank]:
    query_ids = draw(st.lists(ids, unique=True, min_size=1, max_size=5))
    item_ids = iter(draw(st.lists(ids, unique=True, min_size=30, max_size=30)))
    banks = []
    for query_id in query_ids:
        target = draw(st.sampled_from([TARGET_QUESTIONS, TARGET_NUGGETS]))
        answers = st.none()
        if target == TARGET_QUESTIONS:
            answers = st.one_of(st.none(), st.lists(texts, max_size=3).map(tuple))
        items = tuple(
            BankItem(next(item_ids), draw(texts), draw(answers))
            for _ in range(draw(st.integers(0, 5)))
        )
        banks.append(QueryBank(query_id, draw(texts), target, items))
    return banks


@SETTINGS
@given(banks=bank_files())
def test_a_written_test_bank_reads_back_and_writes_again_byte_for_byte(
    banks: list[QueryBank],
) -> None:
    first = written(write_test_bank, banks)

    result = parse_test_bank(bio(first))

    assert result.problems == []
    assert result.records == banks
    assert written(write_test_bank, result.records) == first
