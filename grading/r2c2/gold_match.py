"""The deterministic half of the answer check: does an answer match the gold answer key?
(docs/judging.md, "The gold answer key's rules")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

#: The rules' version, part of the cache key of every judgment checked against a gold
#: answer key: an answer a changed rule decides (or leaves to the LLM) is judged again.
GOLD_RULE_VERSION = "gold-rules-2"

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
          "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
          "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_UNITS)}
NUMBER_WORDS.update({word: 10 * value for value, word in enumerate(_TENS) if word})

ARTICLES = frozenset({"a", "an", "the"})
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")  # "(1999)", "[film]"
_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0](?=\d{3}\b)")  # 1,000 -> 1000
_NOT_WORD = re.compile(r"[^\w]+")
# Where an answer's lead ends: ";", a sentence's end, a dash between spaces. Not a comma:
# "The Matrix, Fight Club and Heat" lists candidates.
_LEAD_END = re.compile(r";|\.\s|\s[-\u2013\u2014]\s|\u2014")
# Where a key line listing several parts divides them: "A, B and C", "A & B".
_LIST_PARTS = re.compile(r",|;|&|\band\b", re.IGNORECASE)
# Words that make a leading answer a hedge between candidates: the LLM decides those.
HEDGES = frozenset({"or", "maybe", "perhaps", "possibly", "probably", "likely", "might",
                    "either", "unsure", "believe", "think", "guess", "could", "not"})


@dataclass(frozen=True)
class GoldVerdict:
    """What the rule decided and which rule: kept as the judgment's provenance."""

    correct: bool
    rule: str  # "gold-match", "gold-lead", "number-mismatch", "all-of-list", "part-of-list"
    matched: str  # the gold line that matched, or the list it gives part of (else empty)


def normalise(text: str) -> str:
    """The comparable form of an answer (docs/judging.md, "The gold answer key's rules")."""
    text = _without_asides(unicodedata.normalize("NFKC", text).casefold())
    text = _THOUSANDS.sub("", text)
    words = [w for w in _NOT_WORD.sub(" ", text.replace("_", " ")).split() if w not in ARTICLES]
    return " ".join(_numbers_as_digits(words))


def _without_asides(text: str) -> str:
    while _ASIDE.search(text):  # nested asides come off from the inside out
        text = _ASIDE.sub(" ", text)
    return text


def _numbers_as_digits(words: list[str]) -> list[str]:
    """"twenty one" -> "21", "four" -> "4"; other words unchanged."""
    out: list[str] = []
    index = 0
    while index < len(words):
        value = NUMBER_WORDS.get(words[index])
        if value is None:
            out.append(words[index])
        else:
            unit = NUMBER_WORDS.get(words[index + 1]) if index + 1 < len(words) else None
            if value >= 20 and unit is not None and 0 < unit < 10:
                value += unit
                index += 1
            out.append(str(value))
        index += 1
    return out


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def gold_verdict(answer: str, gold_answers: Iterable[str]) -> GoldVerdict | None:
    """The rule's verdict on `answer` against the key's lines, or None: ask the LLM."""
    golds = [(line, normalise(line)) for line in gold_answers]
    golds = [(line, form) for line, form in golds if form]
    mine = normalise(answer)
    if not mine or not golds:
        return None
    for line, form in golds:
        if mine == form:
            return GoldVerdict(correct=True, rule="gold-match", matched=line)
    lead = normalise(_LEAD_END.split(_without_asides(answer), maxsplit=1)[0])
    if lead != mine and not HEDGES.intersection(mine.split()):
        for line, form in golds:
            if lead == form:
                return GoldVerdict(correct=True, rule="gold-lead", matched=line)
    if _is_number(mine) and all(_is_number(form) for _, form in golds):
        return GoldVerdict(correct=False, rule="number-mismatch", matched="")
    given = _parts(answer)
    for line, _ in golds:
        listed = _parts(line)
        if len(listed) >= 2 and given == listed and not HEDGES.intersection(mine.split()):
            return GoldVerdict(correct=True, rule="all-of-list", matched=line)
        if given and len(listed) >= 2 and given < listed:
            return GoldVerdict(correct=False, rule="part-of-list", matched=line)
    return None


def _parts(text: str) -> set[str]:
    """The normalised parts of a list: "Best Picture, Best Director and X" -> 3 parts."""
    return {form for form in (normalise(part) for part in _LIST_PARTS.split(text)) if form}
