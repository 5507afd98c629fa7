"""The sentence segmenter of response runs: a text cut into passages of at most 100 words.

A response's text is cut at sentence boundaries into passages of at most 100 words;
segment i has rank i and docid ``RUN:qid:i`` (docs/formats.md). Here that means:

1. Sentence boundaries come from sentencex (Wikimedia's rule-based segmenter: about 300
   languages, abbreviations, decimals and quotes handled, paragraph breaks are
   boundaries; no model or data to download). Its boundaries are character offsets, so
   passages are cut from the text itself and nothing is lost or rewritten.
2. A word is a run of non-white-space characters (``str.split``). A sentence longer than
   `max_words` is cut after every `max_words`-th word.
3. Whole sentences (and the pieces of long ones) are packed into a passage, in order,
   while it stays within `max_words`; the next one that does not fit starts a new
   passage. So a passage ends only at a sentence boundary or at a long sentence's cut.
4. A passage is the text from its first word to its last, inner white space and line
   breaks kept as written.

So the passages, split into words, give back the text's words in order (a boundary that
sentencex finds inside a word, as in ``it?No``, cuts that word in two, and then its
characters are still all there, in order). Languages written without spaces between
words count a whole sentence as one word: the 100-word limit is on white-space words.

Pure: no Django imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_PASSAGE_WORDS = 100
DEFAULT_LANGUAGE = "en"

_WORD = re.compile(r"\S+")


def segment_text(
    text: str, *, max_words: int = MAX_PASSAGE_WORDS, language: str = DEFAULT_LANGUAGE
) -> list[str]:
    """`text` cut at sentence boundaries into passages of at most `max_words` words.

    A text without words gives no passage. `language` is an ISO 639 code for sentencex
    (its rules fall back through related languages to English).
    """
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
    """``(start, end, words)`` of each sentence, or piece of a long one, with a word.

    `start` is its first word's start and `end` its last word's end.
    """
    for sentence_start, sentence_end in _sentences(text, language):
        spans = [match.span() for match in _WORD.finditer(text, sentence_start, sentence_end)]
        for first in range(0, len(spans), max_words):
            chunk = spans[first : first + max_words]
            yield chunk[0][0], chunk[-1][1], len(chunk)


def _sentences(text: str, language: str) -> Iterator[tuple[int, int]]:
    """Consecutive ``(start, end)`` spans covering all of `text`, one per sentence.

    Only sentencex's end offsets are used, as cuts, so the spans cover the text whatever
    it reports: no gap, no overlap, nothing outside the text.
    """
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
