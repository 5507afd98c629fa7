"""The names-and-numbers check on entailment."""

from __future__ import annotations

import pytest

from grading.entailment_rule import unsupported

PASSAGE = ("Alien is a 1979 science fiction horror film directed by Ridley Scott. Its "
           "score is by Jerry Goldsmith; it won the Oscar for Best Visual Effects.")


@pytest.mark.parametrize(("nugget", "missing"), [
    ("Alien was directed by James Cameron.", ["cameron", "james"]),   # a name swap
    ("Alien was released in 1986.", ["1986"]),                       # a changed date
    ("Alien was scored by John Williams.", ["john", "williams"]),
    ("Alien won two Academy Awards.", ["2"]),                        # a count it lacks
    ("Alien, scored by Goldsmith, was Ridley Scott's film.", []),     # a possessive
    ("Alien won an Academy Award for Best Visual Effects.", []),     # award wording
    ("Alien came out in nineteen seventy-nine.", []),                # large words: not checked
    ("Directed by Scott, Alien is a 1979 film.", []),                # the first word is no name
])
def test_names_and_numbers_the_passage_lacks(nugget: str, missing: list[str]) -> None:
    assert unsupported(PASSAGE, nugget) == missing
