"""A cheap check a bogus nugget often fails: does the passage hold the nugget's names and
numbers? (docs/judging.md, "The names-and-numbers rule")."""

from __future__ import annotations

import functools
import re
from decimal import Decimal

from grading.r2c2.gold_match import NUMBER_WORDS

_APOSTROPHES = "'\u2019"  # straight and typographic
_WORD = re.compile(rf"[\w{_APOSTROPHES}\-]+")
_POSSESSIVES = ("'s", "\u2019s")
# "U.S.", "U.S.A.": an acronym written with dots, read as "US", "USA".
_DOTTED = re.compile(r"\b(?:[A-Z]\.){2,}")
# A whole number: thousands separated by commas or not, its decimals, then a scale word
# or suffix ("$3.5 billion", "$200m"). Not inside a word ("MI6", "A1").
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
    r"(?:\s*(thousand|million|billion|trillion)\b|(k|m|bn)\b)?", re.IGNORECASE)
_SCALES = {"thousand": 3, "k": 3, "million": 6, "m": 6, "billion": 9, "bn": 9,
           "trillion": 12}

#: Capitalised words that are not names: function words that can start a clause, and
#: award vocabulary, which passages word many ways ("won an Oscar", "Academy Award").
NOT_NAMES = frozenset([
    "the", "a", "an", "in", "it", "its", "his", "her", "their", "this", "that", "these",
    "those", "after", "before", "during", "both", "when", "while", "on", "at", "by", "for",
    "from", "of", "to", "with", "as", "and", "or", "but", "not", "no",
    "oscar", "oscars", "oscar-winning", "academy", "award", "awards", "best", "director",
    "actor", "actress", "picture", "supporting", "original", "adapted", "screenplay",
    "film", "feature",
])
#: Small words inside a name that its acronym leaves out ("United States of America").
ACRONYM_SKIPS = frozenset(["of", "and", "the", "for", "de", "&"])
#: Number words checked: "one" is too often a pronoun, and larger ones are rare and
#: come compounded ("nineteen ninety-nine").
SMALL_NUMBERS = {word: value for word, value in NUMBER_WORDS.items() if 2 <= value <= 10}

#: The rule's version, part of every entailment judgment's cache key: a judgment the
#: rule decided (or left to the LLM) under another version is made again.
RULE_VERSION = "names-and-numbers-2"

#: How often the rule is right when it calls a nugget unsupported: the share of its
#: flags that were bogus nuggets on the dev set (grading/validation/dev.jsonl), 57 of
#: 58, with one success and one failure added (Laplace's rule of succession). A
#: judgment the rule decides carries it as its confidence.
RULE_PRECISION = 58 / 60


def _strip(word: str) -> str:
    if word.endswith(_POSSESSIVES):
        word = word[:-2]
    return word.strip(_APOSTROPHES)


def _is_acronym(word: str) -> bool:
    """Two capitals or more and no small letter: "US", "WWII", "MI6" (not "I", "Ken")."""
    return word.isupper() and sum(c.isupper() for c in word) >= 2


def _words(text: str) -> list[str]:
    """The text's words as written, possessives stripped, dotted acronyms joined; plain string
    operations, since a regex call per word cost more than the judge call's HTTP."""
    text = _DOTTED.sub(lambda match: match.group().replace(".", "") + " ", text)
    return [_strip(word) for word in _WORD.findall(text)]


def _capitalised_runs(words: list[str]) -> list[tuple[int, list[str]]]:
    """The runs of capitalised words with where each starts; small words such as "of"
    are allowed inside a run (lowercased), not at its ends."""
    runs: list[tuple[int, list[str]]] = []
    start, current = 0, list[str]()
    for index, word in enumerate([*words, ""]):
        if word[:1].isupper():
            if not current:
                start = index
            current.append(word)
        elif current and word.lower() in ACRONYM_SKIPS:
            current.append(word.lower())
        elif current:
            while current[-1] in ACRONYM_SKIPS:
                current.pop()
            runs.append((start, current))
            current = []
    return runs


def _initials(run: list[str]) -> str:
    """ "United States" -> "US", "World War II" -> "WWII", "Metro-Goldwyn-Mayer" -> "MGM"."""
    letters = []
    for word in run:
        if word in ACRONYM_SKIPS:
            continue
        for part in word.split("-"):
            letters.append(part if _is_acronym(part) else part[:1])
    return "".join(letters)


def _spans(run: list[str]) -> list[tuple[int, int]]:
    """The (start, end) of each part of a run that begins and ends with a capitalised
    word and spells an acronym of two letters or more."""
    return [(start, end) for start in range(len(run)) for end in range(start + 1, len(run) + 1)
            if run[start] not in ACRONYM_SKIPS and run[end - 1] not in ACRONYM_SKIPS
            and len(_initials(run[start:end])) >= 2]


def _acronyms(words: list[str]) -> set[str]:
    """The acronyms a text gives, and those its capitalised names expand ("US" for
    "United States"), each as capitals without dots."""
    found = {word for word in words if _is_acronym(word)}
    for _, run in _capitalised_runs(words):
        found.update(_initials(run[start:end]) for start, end in _spans(run))
    return found


def _numbers(text: str, words: list[str], *, number_words: dict[str, int],
             unscaled: bool) -> set[Decimal]:
    """The numbers `text` gives in digits (with their scale) or among `number_words`.
    With `unscaled`, also each number without its scale word ("3.5" of "3.5 billion")."""
    found: set[Decimal] = set()
    for whole, decimals, word, suffix in _NUMBER.findall(text):
        value = Decimal(whole.replace(",", "") + decimals)
        scale = (word or suffix).lower()
        if scale:
            if unscaled:
                found.add(value.normalize())
            value = value.scaleb(_SCALES[scale])
        found.add(value.normalize())
    found.update(Decimal(number_words[w]) for w in (w.lower() for w in words) if w in number_words)
    return found


@functools.lru_cache(maxsize=1024)
def _passage_terms(passage: str) -> tuple[frozenset[str], frozenset[str], frozenset[Decimal]]:
    """The passage's lowercased words, its acronyms and its numbers. Cached: a passage is
    cited by many nuggets, of one run and of others, and a batch meets it again and again."""
    words = _words(passage)
    return (frozenset(word.lower() for word in words), frozenset(_acronyms(words)),
            frozenset(_numbers(passage, words, number_words=NUMBER_WORDS, unscaled=True)))


def _expanded(words: list[str], acronyms: frozenset[str]) -> set[int]:
    """Positions of the nugget's capitalised words that spell out one of `acronyms`
    ("United Kingdom" where the passage says "UK")."""
    return {position + index
            for position, run in _capitalised_runs(words)
            for start, end in _spans(run) if _initials(run[start:end]) in acronyms
            for index in range(start, end)}


def unsupported(passage: str, nugget: str) -> list[str]:
    """The nugget's names and numbers that the passage lacks, sorted (empty: none)."""
    have, passage_acronyms, passage_numbers = _passage_terms(passage)
    words = _words(nugget)
    lacking: dict[int, str] = {}  # position -> the name as a reason gives it
    for index, word in enumerate(words):
        if index == 0 or len(word) < 2 or not word[0].isupper():
            continue
        if _is_acronym(word):
            if word not in passage_acronyms:
                lacking[index] = word
            continue
        name = word.lower()
        if name in NOT_NAMES:
            continue
        if name not in have and name.rstrip("s") not in have and name + "s" not in have:
            lacking[index] = name
    if lacking and passage_acronyms:
        # Spelled out where the passage abbreviates ("United Kingdom" for "UK"): only
        # looked for when a name is lacking, which few nuggets of a run are.
        for index in _expanded(words, passage_acronyms):
            lacking.pop(index, None)
    missing = set(lacking.values())
    missing.update(_shown(number) for number in _numbers(
        nugget, words, number_words=SMALL_NUMBERS, unscaled=False)
        if number not in passage_numbers)
    return sorted(missing)


def _shown(number: Decimal) -> str:
    """A number as a reason gives it: "1996", "3.5", "3500000000"."""
    return format(number, "f")
