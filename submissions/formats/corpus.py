"""The corpus of a RUBRIC campaign, JSON Lines ``{"docid", "text"}``, read as a stream
that keeps no text (docs/formats.md, "Corpus")."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .common import BinaryReader, Problem, TextSink, excerpt
from .jsonl import dump_line, iter_json_objects, string_value
from .limits import MAX_PASSAGE_CHARS

CORPUS_EXAMPLE = '{"docid": "d1", "text": "..."}'

DOCID_WHITESPACE = (
    "found white space in docid {!r}; expected a docid without white space "
    "(TREC runs and qrels separate their fields with it)"
)
DUPLICATE_CORPUS_DOCID = "found docid {!r} again; expected each docid once in the corpus"
TEXT_TOO_LONG = "found a text of {} characters; expected at most {}"

KEY_DOCID = "docid"
KEY_TEXT = "text"


@dataclass(frozen=True, slots=True)
class CorpusPassage:
    """One line of the corpus: the passage `text` that runs name `docid`."""

    docid: str
    text: str


def iter_corpus(
    binary_file: BinaryReader, problems: list[Problem], *, max_chars: int = MAX_PASSAGE_CHARS
) -> Iterator[CorpusPassage]:
    """Yield the corpus's valid passages as it is read; `problems` is complete only at the end,
    so a caller storing batches as they come must roll back when any problem was found."""
    seen: set[str] = set()
    for lineno, obj in iter_json_objects(
        binary_file, problems, example=CORPUS_EXAMPLE, what="passage line"
    ):
        before = len(problems)
        docid = string_value(obj, KEY_DOCID, lineno, problems)
        if docid is not None:
            if any(character.isspace() for character in docid):
                problems.append(Problem(lineno, KEY_DOCID, DOCID_WHITESPACE.format(excerpt(docid))))
            elif docid in seen:
                problems.append(
                    Problem(lineno, KEY_DOCID, DUPLICATE_CORPUS_DOCID.format(excerpt(docid)))
                )
            else:
                seen.add(docid)
        text = string_value(obj, KEY_TEXT, lineno, problems, line_breaks=True)
        if text is not None and len(text) > max_chars:
            problems.append(Problem(lineno, KEY_TEXT, TEXT_TOO_LONG.format(len(text), max_chars)))
        if len(problems) == before and docid is not None and text is not None:
            yield CorpusPassage(docid, text)


def validate_corpus(
    binary_file: BinaryReader, *, max_chars: int = MAX_PASSAGE_CHARS
) -> list[Problem]:
    """Every problem of a corpus, keeping no passage: the first pass of a load."""
    problems: list[Problem] = []
    for _ in iter_corpus(binary_file, problems, max_chars=max_chars):
        pass
    return problems


def write_corpus(passages: Iterable[CorpusPassage], text_file: TextSink) -> None:
    """Write `passages` as corpus JSONL, one object per line, in the order given."""
    for passage in passages:
        text_file.write(dump_line({KEY_DOCID: passage.docid, KEY_TEXT: passage.text}))
