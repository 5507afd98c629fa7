"""The names-and-numbers check on entailment."""

from __future__ import annotations

from fractions import Fraction

import pytest

from grading.r2c2.entailment_rule import RULE_PRECISION, unsupported
from grading.validation.labelled import DEV_SET, read_labelled_set

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


TOY_STORY = ("Toy Story was released in theaters in the United States on November 22, 1995, "
             "by Buena Vista. It grossed $373.6 million, and its sequels over $3.5 billion.")


@pytest.mark.parametrize(("nugget", "missing"), [
    # An acronym is its expansion, either way, and never the pronoun "us".
    ("Toy Story was released in US theaters on November 22, 1995.", []),
    ("Toy Story was released in U.S. theaters on November 22, 1995.", []),
    ("Toy Story was released in UK theaters in 1995.", ["UK"]),
    ("Toy Story opened in the USA.", ["USA"]),
    # Numbers are whole, with their decimals and scale.
    ("Its sequels grossed over $3.5 billion.", []),
    ("Its sequels grossed over 3,500 million dollars.", []),
    ("Its sequels grossed over $3.5bn.", []),
    ("Its sequels grossed over $3.5 million.", ["3500000"]),
    ("It grossed $373.6 million.", []),
    ("It grossed $376.3 million.", ["376300000"]),
    ("It grossed $373 million.", ["373000000"]),
])
def test_acronyms_and_numbers_are_read_whole(nugget: str, missing: list[str]) -> None:
    assert unsupported(TOY_STORY, nugget) == missing


@pytest.mark.parametrize(("passage", "nugget", "missing"), [
    ("It was made in the US.", "It was made in the United States.", []),
    ("It was made in the United Kingdom.", "It was released in the UK.", []),
    ("Set in the United States of America.", "It is set in the USA.", []),
    ("He led the laboratory during World War II.", "He led it during WWII.", []),
    ("It was made by Metro-Goldwyn-Mayer.", "It is an MGM film.", []),
    ("Bond is an agent of MI6.", "Bond is an MI5 agent.", ["MI5"]),
    ("Let us go to the cinema.", "They went to US cinemas.", ["US"]),
])
def test_an_acronym_matches_its_expansion_and_only_that(passage: str, nugget: str,
                                                        missing: list[str]) -> None:
    assert unsupported(passage, nugget) == missing


def test_the_rule_s_precision_is_what_it_scores_on_the_dev_set() -> None:
    # RULE_PRECISION is the share of the dev set's nuggets the rule flags that are bogus,
    # by Laplace's rule of succession: (flagged bogus + 1) / (flagged + 2).
    flagged = [item for item in read_labelled_set(DEV_SET).entailment
               if unsupported(item.passage, item.nugget)]
    bogus = sum(1 for item in flagged if not item.entailed)
    assert Fraction(RULE_PRECISION).limit_denominator(1000) == Fraction(bogus + 1, len(flagged) + 2)
