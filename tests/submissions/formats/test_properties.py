"""Property-based tests: any input gives problems, never an exception; writers round-trip."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from submissions.formats.ac_run import AnswerRecord, NuggetRecord, parse_ac_run, write_ac_run
from submissions.formats.common import (
    UTF8_BOM,
    BinaryReader,
    ParseResult,
    PassageKey,
    Problem,
    is_blank,
)
from submissions.formats.marked_ac_run import (
    MarkedAnswerRecord,
    MarkedNugget,
    parse_marked_ac_run,
    write_marked_ac_run,
)
from submissions.formats.pr_run import (
    PassageRecord,
    _diagnose,
    parse_pr_run,
    validate_pr_run,
    write_pr_run,
)
from submissions.formats.qrels import QrelsRecord, parse_pr_qrels, write_pr_qrels
from tests.submissions.formats.support import (
    QIDS,
    SHARED_PR_RUNS,
    TrickleReader,
    bio,
    example_bytes,
)

PARSERS: dict[str, Callable[[BinaryReader], ParseResult[Any]]] = {
    "pr": lambda f: parse_pr_run(f, known_qids=QIDS),
    "ac": lambda f: parse_ac_run(f, known_qids=QIDS, shared_pr_runs=SHARED_PR_RUNS),
    "marked": lambda f: parse_marked_ac_run(f, known_qids=QIDS, shared_pr_runs=SHARED_PR_RUNS),
    "qrels": lambda f: parse_pr_qrels(f, known_qids=QIDS),
}
EXAMPLE_FILES = {
    "WASEDA-PO-1": "pr",
    "KYOTO-PG-1": "pr",
    "WASEDA-AC-1": "ac",
    "WASEDA-AC-1.marked": "marked",
    "pr.qrels": "qrels",
}
T = TypeVar("T")
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces the formats are made of, so that random files hit more than the first check.
FRAGMENTS = [
    b"D001",
    b"D002",
    b"<D001>",
    b"</D001>",
    b"<",
    b">",
    b"/",
    b";",
    b";;",
    b":",
    b" ",
    b"\t",
    b"\n",
    b"\r\n",
    b"\r",
    b"0",
    b"1",
    b"07",
    b"20",
    b"21",
    b"100",
    b"WASEDA-PO-1",
    b"KYOTO-PG-1",
    b"R;",
    b"B;",
    b"N;",
    b"text",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xc3\xa9",
    b"\xe2\x80\x93",
    b"\xa0",
    b"\x00",
]
format_like_bytes = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join)
any_bytes = st.one_of(st.binary(max_size=3000), format_like_bytes)


def mutate(data: bytes, mutations: list[tuple[str, int, int]]) -> bytes:
    """Apply byte flips, line deletions and duplications, inserted ``;`` and cuts."""
    for kind, where, what in mutations:
        lines = data.split(b"\n")
        at = where % (len(data) + 1)
        line = where % len(lines)
        if kind == "flip" and data:
            at %= len(data)
            data = data[:at] + bytes([what]) + data[at + 1 :]
        elif kind == "delete line":
            data = b"\n".join(lines[:line] + lines[line + 1 :])
        elif kind == "duplicate line":
            data = b"\n".join(lines[: line + 1] + lines[line:])
        elif kind == "insert":
            data = data[:at] + b";\n\r<>/ :"[what % 8 : what % 8 + 1] + data[at:]
        elif kind == "cut":
            data = data[:at]
    return data


mutations = st.lists(
    st.tuples(
        st.sampled_from(["flip", "delete line", "duplicate line", "insert", "cut"]),
        st.integers(0, 10**6),
        st.integers(0, 255),
    ),
    min_size=1,
    max_size=4,
)


def assert_well_formed(result: object, data: bytes) -> None:
    assert isinstance(result, ParseResult)
    assert isinstance(result.records, list)
    lines = data.count(b"\n") + 1
    for problem in result.problems:
        assert isinstance(problem, Problem)
        assert 0 <= problem.line <= lines
        assert problem.field
        assert problem.message.startswith("found ")


@SETTINGS
@given(data=any_bytes, parser=st.sampled_from(sorted(PARSERS)))
def test_any_bytes_give_problems_and_never_an_exception(data: bytes, parser: str) -> None:
    assert_well_formed(PARSERS[parser](bio(data)), data)


@SETTINGS
@given(name=st.sampled_from(sorted(EXAMPLE_FILES)), changes=mutations)
def test_a_mutated_example_gives_problems_and_never_an_exception(
    name: str, changes: list[tuple[str, int, int]]
) -> None:
    data = mutate(example_bytes(name), changes)
    parser = PARSERS[EXAMPLE_FILES[name]]
    result = parser(bio(data))
    assert_well_formed(result, data)
    if EXAMPLE_FILES[name] == "pr":
        assert validate_pr_run(bio(data), known_qids=QIDS) == result.problems


@SETTINGS
@given(data=any_bytes, step=st.integers(1, 50), parser=st.sampled_from(sorted(PARSERS)))
def test_parsing_does_not_depend_on_how_the_file_is_read(
    data: bytes, step: int, parser: str
) -> None:
    assert PARSERS[parser](TrickleReader(data, step)) == PARSERS[parser](bio(data))


PR_LINE_PIECES = [
    b"",
    b" ",
    b"\t",
    b"\x0b",
    b"D001",
    b"1",
    b"07",
    b"20",
    b"21",
    b"x",
    b";",
    b"\xa0",
    b"\xc2\xa0",
    b"\xe3\x80\x80",
    b"\x1c",
    b"\xff",
    b"\xc3",
    b"\r",
    b"\xef\xbb\xbf",
    b"\xd9\xa1",
]
pr_field = st.lists(st.sampled_from(PR_LINE_PIECES), max_size=3).map(b"".join)


@SETTINGS
@given(qid=pr_field, rank=pr_field, doc=pr_field, text=pr_field)
def test_the_fast_and_slow_paths_of_the_pr_parser_agree(
    qid: bytes, rank: bytes, doc: bytes, text: bytes
) -> None:
    line = b";".join([qid, rank, doc, text])
    slow: list[Problem] = []
    # The reader drops a byte order mark at the start of a file before either path.
    _diagnose(line.removeprefix(UTF8_BOM), 1, 20, slow)
    assert parse_pr_run(bio(line)).problems == slow
    assert validate_pr_run(bio(line)) == slow


# --- round trips -------------------------------------------------------------------------------

# Values as the formats allow them: no line breaks or other control characters but tab
# (docs/formats.md), not blank, no separator where split.


def value(exclude: str = "") -> st.SearchStrategy[str]:
    chars = st.characters(
        codec="utf-8", exclude_categories=["Cc"], include_characters="\t",
        exclude_characters=exclude,
    )
    return st.text(chars, min_size=1, max_size=30).filter(lambda text: not is_blank(text))


# A qID starting with a byte order mark would lose it on line 1; campaigns use plain qIDs.
qids = value(";\ufeff").filter(lambda qid: not qid.startswith("/"))
run_names = st.builds(
    "{}-{}-{}".format,
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=1, max_size=8),
    st.sampled_from(["PG", "PO"]),
    st.integers(1, 9),
)


@st.composite
def pr_runs(draw: st.DrawFn) -> list[PassageRecord]:
    keys = draw(st.lists(st.tuples(qids, st.integers(1, 20)), unique=True, min_size=1, max_size=30))
    return [PassageRecord(qid, rank, draw(value(";")), draw(value())) for qid, rank in keys]


@st.composite
def nuggets(draw: st.DrawFn, qid: str) -> tuple[NuggetRecord, ...]:
    nums = draw(st.lists(st.integers(1, 10), unique=True, max_size=10))
    return tuple(
        NuggetRecord(qid, num, PassageKey(draw(run_names), draw(st.integers(1, 20))), draw(value()))
        for num in nums
    )


@st.composite
def ac_runs(draw: st.DrawFn) -> list[AnswerRecord]:
    return [
        AnswerRecord(qid, draw(value()), draw(st.integers(0, 100)), draw(nuggets(qid)))
        for qid in draw(st.lists(qids, unique=True, min_size=1, max_size=8))
    ]


@st.composite
def marked_ac_runs(draw: st.DrawFn) -> list[MarkedAnswerRecord]:
    return [
        MarkedAnswerRecord(
            answer.qid,
            answer.answer,
            answer.confidence,
            tuple(MarkedNugget(n, draw(st.sampled_from(["B", "R", "N"]))) for n in answer.nuggets),
        )
        for answer in draw(ac_runs())
    ]


@st.composite
def pr_qrels(draw: st.DrawFn) -> list[QrelsRecord]:
    keys = draw(
        st.lists(
            st.tuples(value(" \ufeff"), st.builds(PassageKey, run_names, st.integers(1, 20))),
            unique=True,
            min_size=1,
            max_size=20,
        )
    )
    return [QrelsRecord(qid, key, draw(st.integers(0, 10**6))) for qid, key in keys]


def written(write: Callable[[list[T], io.StringIO], None], records: list[T]) -> io.BytesIO:
    out = io.StringIO()
    write(records, out)
    return bio(out.getvalue())


@SETTINGS
@given(records=pr_runs())
def test_a_written_pr_run_parses_back_to_its_records(records: list[PassageRecord]) -> None:
    assert parse_pr_run(written(write_pr_run, records)) == ParseResult(records, [])


@SETTINGS
@given(records=ac_runs())
def test_a_written_ac_run_parses_back_to_its_records(records: list[AnswerRecord]) -> None:
    assert parse_ac_run(written(write_ac_run, records)) == ParseResult(records, [])


@SETTINGS
@given(records=marked_ac_runs())
def test_a_written_marked_ac_run_parses_back_to_its_records(
    records: list[MarkedAnswerRecord],
) -> None:
    assert parse_marked_ac_run(written(write_marked_ac_run, records)) == ParseResult(records, [])


@SETTINGS
@given(records=pr_qrels())
def test_written_qrels_parse_back_to_their_records(records: list[QrelsRecord]) -> None:
    assert parse_pr_qrels(written(write_pr_qrels, records)) == ParseResult(records, [])
