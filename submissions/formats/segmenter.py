"""Cuts a response's text at sentence boundaries (sentencex) into passages of at most 100
words, losing and rewriting nothing (docs/formats.md, "How a response is cut")."""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_PASSAGE_WORDS = 100
DEFAULT_LANGUAGE = "en"

_WORD = re.compile(r"\S+")


def segment_text(
    text: str, *, max_words: int = MAX_PASSAGE_WORDS, language: str = DEFAULT_LANGUAGE
) -> list[str]:
    """`text` cut into passages of at most `max_words` words (none for a text without words);
    `language` is sentencex's ISO 639 code."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    passages: list[str] = []
    start = end = 0  # of the passage being packed, in `text`
    words = 0
    for piece_start, piece_end, piece_words in _pieces(text, max_words, language):
        if words and words + piece_words > max_words:
            passages.append(text[start:end])
            words = 0
        if not words:
            start = piece_start
        end = piece_end
        words += piece_words
    if words:
        passages.append(text[start:end])
    return passages


def _pieces(text: str, max_words: int, language: str) -> Iterator[tuple[int, int, int]]:
    """``(start, end, words)`` of each sentence, or piece of a long one, with a word: from its
    first word's start to its last word's end."""
    for sentence_start, sentence_end in _sentences(text, language):
        spans = [match.span() for match in _WORD.finditer(text, sentence_start, sentence_end)]
        for first in range(0, len(spans), max_words):
            chunk = spans[first : first + max_words]
            yield chunk[0][0], chunk[-1][1], len(chunk)


def _sentences(text: str, language: str) -> Iterator[tuple[int, int]]:
    """Consecutive ``(start, end)`` spans covering all of `text`, one per sentence: sentencex's
    end offsets are used only as cuts, so there is no gap or overlap."""
    # Imported here, not with the module: the participants' client (client/) ships this
    # package to check files before upload, and never segments, without sentencex.
    import sentencex  # type: ignore[import-untyped]  # ships no type information

    cuts = sorted(
        {
            boundary["end_index"]
            for boundary in sentencex.get_sentence_boundaries(language, text)
            if 0 < boundary["end_index"] < len(text)
        }
    )
    start = 0
    for cut in cuts:
        yield start, cut
        start = cut
    yield start, len(text)
