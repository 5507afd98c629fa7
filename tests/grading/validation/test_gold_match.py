"""The deterministic half of the answer check: the normalised match against gold answers."""

from __future__ import annotations

import pytest

from grading.r2c2.gold_match import GoldVerdict, gold_verdict, normalise


@pytest.mark.parametrize(("answer", "gold"), [
    ("The Matrix (1999)", "The Matrix"),           # an aside in parentheses
    ("the matrix.", "The Matrix"),                 # case, punctuation, the article
    ("Four", "4"),                                 # number words and digits
    ("twenty-one", "21"),
    ("1,000", "1000"),
    ("Ghibli", "Studio Ghibli; Ghibli"),           # only whole lines match: no match
    ("\uff33\uff34\uff35\uff24\uff29\uff2f\u3000\uff27\uff28\uff29\uff22\uff2c\uff29",
     "Studio Ghibli"),                              # full-width forms (NFKC)
])
def test_normalisation(answer: str, gold: str) -> None:
    same = normalise(answer) == normalise(gold)
    assert same is (answer != "Ghibli")


def test_an_answer_equal_to_any_line_of_the_key_is_correct_by_rule() -> None:
    verdict = gold_verdict("One", ["1", "One (The Return of the King)"])

    assert verdict == GoldVerdict(correct=True, rule="gold-match", matched="1")


def test_the_key_line_with_an_aside_matches_the_bare_answer() -> None:
    key = ["The Matrix", "The Matrix (released March 1999; Fight Club in October 1999)"]
    assert gold_verdict("the Matrix", key) == GoldVerdict(True, "gold-match", "The Matrix")


def test_two_different_short_numbers_are_incorrect_by_rule() -> None:
    assert gold_verdict("6", ["4", "Four"]) == GoldVerdict(False, "number-mismatch", "")
    assert gold_verdict("three", ["1"]) == GoldVerdict(False, "number-mismatch", "")


@pytest.mark.parametrize("answer", [
    "The Matrix; released March 31, 1999, before Fight Club (October 15, 1999)",
    "The Matrix (1999). It came out six months before Fight Club.",
    "The Matrix \u2014 the Wachowskis' film, released in March",
])
def test_an_answer_that_leads_with_a_key_line_then_explains_is_correct_by_rule(
    answer: str
) -> None:
    assert gold_verdict(answer, ["Heat", "The Matrix"]) == GoldVerdict(
        True, "gold-lead", "The Matrix")


@pytest.mark.parametrize("answer", [
    "The Matrix; or maybe Fight Club",              # a hedge after the lead
    "The Matrix; I think, not sure",
    "The Matrix, Fight Club and Magnolia",          # a list: a comma ends no lead
    "Fight Club; not The Matrix",                   # another lead
])
def test_a_lead_with_a_hedge_or_another_answer_is_not_decided_by_rule(answer: str) -> None:
    assert gold_verdict(answer, ["The Matrix"]) is None


@pytest.mark.parametrize("answer", [
    "Fight Club",                                   # another entity: the LLM decides
    "Released in 1999 before Fight Club, it is The Matrix",   # explains first
    "Probably The Matrix, or Fight Club",           # a hedge
    "4 Oscars",                                     # a number with words: not a bare number
    "",
])
def test_everything_else_goes_to_the_llm(answer: str) -> None:
    assert gold_verdict(answer, ["The Matrix", "4"]) is None


def test_no_usable_key_line_leaves_it_to_the_llm() -> None:
    assert gold_verdict("The Matrix", ["  ", "()"]) is None


@pytest.mark.parametrize(("answer", "key"), [
    ("Best Picture and Best Director", "Best Picture, Best Director and Best Screenplay"),
    ("Matt Damon", "Ben Affleck and Matt Damon"),
    ("oxygen", "Hydrogen & Oxygen"),
])
def test_an_answer_giving_only_some_parts_of_a_listed_key_is_incorrect_by_rule(
    answer: str, key: str
) -> None:
    assert gold_verdict(answer, ["Something else", key]) == GoldVerdict(
        False, "part-of-list", key)


def test_an_answer_naming_every_part_of_a_listed_key_in_another_order_is_correct() -> None:
    assert gold_verdict("Matt Damon, Ben Affleck", ["Ben Affleck and Matt Damon"]) == (
        GoldVerdict(True, "all-of-list", "Ben Affleck and Matt Damon"))


@pytest.mark.parametrize("answer", [
    "Matt Damon and Robin Williams",                # a part and something else: the LLM
    "Damon",                                        # no part as written
])
def test_an_answer_that_is_not_a_strict_part_of_a_listed_key_goes_elsewhere(
    answer: str
) -> None:
    verdict = gold_verdict(answer, ["Ben Affleck and Matt Damon"])
    assert verdict is None or verdict.rule != "part-of-list"
