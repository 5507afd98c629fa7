"""A cheap check a bogus nugget often fails: does the passage hold its names and numbers?

A nugget that names a person, film or studio, or gives a number, that its cited passage
never mentions cannot be entailed by it: that is how most name swaps, changed dates
and counts, added facts and nuggets citing an unrelated passage look. This module
finds such names (capitalised words after the first, possessives stripped, award
vocabulary such as "Oscar" or "Best Director" left out since passages word awards many
ways) and numbers (digits, and the words two to ten) that the passage lacks.

It is evidence, not a verdict: the judge still asks the LLM, and where the two disagree
the judgment is marked doubtful, for a person to decide (grading/judge.py). On the dev
set (grading/validation/dev.jsonl) it flags 57 of the 120 bogus nuggets and 1 of the
106 entailed ones; on a held-out set, 33 of 70 bogus and 3 of 68 entailed (claims that
need arithmetic: "under 30", "two consecutive years"). The first word is never taken
for a name (it is capitalised anyway), so a swapped subject is left to the LLM.

    >>> unsupported("Alien (1979) was directed by Ridley Scott.", "James Cameron directed Alien.")
    ['cameron']
    >>> unsupported("Toy Story was released in 1995.", "Toy Story came out in 1996.")
    ['1996']
    >>> unsupported("Ridley Scott's Alien won an Oscar.", "Alien, by Scott, won an Academy Award.")
    []
"""

from __future__ import annotations

import functools
import re

from grading.gold_match import NUMBER_WORDS

_APOSTROPHES = "'\u2019"  # straight and typographic
_WORD = re.compile(rf"[\w{_APOSTROPHES}\-]+")
_POSSESSIVES = ("'s", "\u2019s")
_DIGITS = re.compile(r"\d[\d,]*")

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
#: Number words checked: "one" is too often a pronoun, and larger ones are rare and
#: come compounded ("nineteen ninety-nine").
SMALL_NUMBERS = {word: value for word, value in NUMBER_WORDS.items() if 2 <= value <= 10}


def _strip(word: str) -> str:
    if word.endswith(_POSSESSIVES):
        word = word[:-2]
    return word.strip(_APOSTROPHES)


def _words(text: str) -> tuple[list[str], list[str]]:
    """The text's words as written and as lowercased, possessives stripped from each
    (a capitalised "'S" only from the lowercased ones: numbers are read from those).

    Plain string operations, not a substitution per word: the judge runs this on every
    nugget it grades, and a regex call per word cost more than the judge call's HTTP."""
    raw = _WORD.findall(text)
    return [_strip(word) for word in raw], [_strip(word.lower()) for word in raw]


def _numbers(text: str, lowered: list[str], *, number_words: dict[str, int]) -> set[int]:
    """The numbers `text` gives in digits or (among `number_words`) in its `lowered` words."""
    found = {int(digits) for digits in (d.replace(",", "") for d in _DIGITS.findall(text))
             if digits.isdigit()}
    found.update(number_words[word] for word in lowered if word in number_words)
    return found


@functools.lru_cache(maxsize=1024)
def _passage_terms(passage: str) -> tuple[frozenset[str], frozenset[int]]:
    """The passage's lowercased words and its numbers. Cached: a passage is cited by many
    nuggets, of one run and of others, and a grading batch meets it again and again."""
    words, lowered = _words(passage)
    return (frozenset(word.lower() for word in words),
            frozenset(_numbers(passage, lowered, number_words=NUMBER_WORDS)))


def unsupported(passage: str, nugget: str) -> list[str]:
    """The nugget's names and numbers that the passage lacks, sorted (empty: none)."""
    have, passage_numbers = _passage_terms(passage)
    words, lowered = _words(nugget)
    names = {word.lower() for index, word in enumerate(words)
             if index > 0 and len(word) > 1 and word[0].isupper()
             and word.lower() not in NOT_NAMES}
    missing = [name for name in names
               if name not in have and name.rstrip("s") not in have and name + "s" not in have]
    missing += [str(number) for number in _numbers(nugget, lowered, number_words=SMALL_NUMBERS)
                if number not in passage_numbers]
    return sorted(missing)
