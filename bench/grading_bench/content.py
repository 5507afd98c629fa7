"""The synthetic campaign's content: films, their passages, nuggets, questions and answers.

Every text is a pure function of its indices, so a run written twice is the same file
and the benchmark's figures do not depend on a random seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PR_RUN = "BENCH-PO-1"
MAX_NUGGETS = 10

ADJECTIVES = ("Silent", "Crimson", "Hidden", "Golden", "Broken", "Distant", "Frozen",
              "Burning", "Velvet", "Hollow", "Iron", "Lonely", "Midnight", "Painted",
              "Restless", "Scarlet", "Secret", "Shattered", "Silver", "Wandering")
NOUNS = ("Harbor", "Empire", "Garden", "Mirror", "River", "Kingdom", "Letter", "Orchard",
         "Station", "Voyage", "Horizon", "Lantern", "Promise", "Shadow", "Summer", "Tide",
         "Valley", "Winter", "Bridge", "Crown")
FIRST = ("Anna", "Brian", "Chiara", "Daniel", "Emiko", "Farid", "Grace", "Hiroshi", "Ines",
         "Jonas", "Keiko", "Liam", "Maya", "Nikolai", "Olivia", "Pedro", "Rosa", "Samuel",
         "Tomoko", "Victor")
LAST = ("Abe", "Bennett", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hayashi",
        "Ivanov", "Jensen", "Kowalski", "Lopez", "Moreau", "Nakamura", "Okafor", "Petrov",
        "Quinn", "Rossi", "Suzuki", "Thompson")
STUDIOS = ("Northlight Pictures", "Blue Crane Films", "Meridian Studios", "Red Lantern Works",
           "Harborview Entertainment", "Sakura Gate Films", "Atlas Motion", "Ember Road")
CITIES = ("Lisbon", "Osaka", "Montreal", "Prague", "Cape Town", "Reykjavik", "Seville",
          "Hanoi", "Glasgow", "Valparaiso", "Kyoto", "Tallinn")
GENRES = ("drama", "thriller", "comedy", "science fiction", "war", "musical", "mystery")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
FILLER = (
    "Critics praised its cinematography and the restraint of its performances.",
    "The screenplay went through several drafts before filming began.",
    "Its opening weekend was stronger than the studio had expected.",
    "A restored version was released on home video a decade later.",
    "The film was nominated for awards in several categories.",
    "Some reviewers found the second half slower than the first.",
    "The production faced delays because of bad weather on location.",
    "Its soundtrack album reached the charts in several countries.",
)


@dataclass(frozen=True)
class Film:
    """The facts of one synthetic passage (one per question and PassageRank)."""

    title: str
    year: int
    genre: str
    director: str
    actors: tuple[str, str]
    composer: str
    studio: str
    city: str
    month: str
    day: int


def _person(index: int, role: int) -> str:
    return f"{FIRST[(index * 7 + role * 3) % len(FIRST)]} {LAST[(index * 11 + role) % len(LAST)]}"


def film(index: int) -> Film:
    """A distinct film per index: (adjective, noun, part) is a bijection of the index."""
    combos = len(ADJECTIVES) * len(NOUNS)
    adjective, noun = ADJECTIVES[index % len(ADJECTIVES)], NOUNS[index % combos // len(ADJECTIVES)]
    part = index // combos + 1
    title = f"The {adjective} {noun}" + (f" Part {part}" if part > 1 else "")
    return Film(title=title, year=1950 + index * 13 % 74, genre=GENRES[index % len(GENRES)],
                director=_person(index, 0), actors=(_person(index, 1), _person(index, 2)),
                composer=_person(index, 3), studio=STUDIOS[index * 5 % len(STUDIOS)],
                city=CITIES[index * 7 % len(CITIES)], month=MONTHS[index * 5 % 12],
                day=1 + index * 17 % 28)


def passage_text(index: int, words: int) -> str:
    f = film(index)
    sentences = [
        f"{f.title} is a {f.year} {f.genre} film directed by {f.director}.",
        f"It stars {f.actors[0]} and {f.actors[1]}, with music by {f.composer}.",
        f"The film was produced by {f.studio} and shot in {f.city}.",
        f"It premiered on {f.month} {f.day}, {f.year}.",
    ]
    filler = 0
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(FILLER[(index + filler) % len(FILLER)])
        filler += 1
    return " ".join(sentences)


def nugget_text(index: int, variant: int) -> tuple[str, bool]:
    """(nugget, whether the passage entails it): one fact of the film, or a wrong one.

    Each variant (one per AC run) states another fact, so nuggets stay distinct across
    runs; about one in four is altered so that the passage does not entail it.
    """
    f = film(index)
    wrong = (index * 3 + variant) % 4 == 3
    other = film(index + 97)
    facts = (
        f"{f.title} ({f.year}) was directed by {(other if wrong else f).director}.",
        f"{(other if wrong else f).actors[0]} starred in {f.title}.",
        f"{f.title} was shot in {(other if wrong and other.city != f.city else f).city}.",
        f"The music of {f.title} was written by {(other if wrong else f).composer}.",
        f"{f.title} premiered on {f.month} {f.day + 1 if wrong else f.day}, {f.year}.",
        f"{f.title} was produced by "
        f"{(other if wrong and other.studio != f.studio else f).studio}.",
    )
    text = facts[(index + variant) % len(facts)]
    if variant >= len(facts):
        # The variant in letters: a number the passage lacks would make every such
        # nugget fail the names-and-numbers rule (grading/r2c2/entailment_rule.py).
        letters = "".join(chr(ord("a") + int(digit)) for digit in str(variant))
        text = text[:-1] + f", as source {letters} reports."
    entailed = not wrong or (text == facts[2] and other.city == f.city) or (
        text == facts[5] and other.studio == f.studio)
    return text, entailed


def film_index(q: int, rank: int) -> int:
    return (q - 1) * MAX_NUGGETS + rank - 1


def question_text(q: int) -> str:
    return f"Who directed the film {film(film_index(q, 1)).title}, and who starred in it?"


def answer_text(q: int, variant: int) -> str:
    f = film(film_index(q, 1))
    return f.director if (q + variant) % 3 else film(film_index(q, 1) + 97).director


def write_pr_run(path: Path, *, questions: int, nuggets: int, words: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(1, questions + 1):
            for rank in range(1, nuggets + 1):
                index = film_index(q, rank)
                out.write(f"Q{q:04d};{rank};doc{index};{passage_text(index, words)}\n")


def write_ac_run(path: Path, *, questions: int, nuggets: int, variant: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(1, questions + 1):
            out.write(f"<Q{q:04d}>\n{answer_text(q, variant)};{q * 37 % 101}\n")
            for n in range(1, nuggets + 1):
                text, _ = nugget_text(film_index(q, n), variant)
                out.write(f"{n};{PR_RUN};{n};{text}\n")
            out.write(f"</Q{q:04d}>\n")
