"""Versioned prompt templates: the first R2C2 ones (v1) and the RUBRIC ones. Change a text and
you must bump its version, part of every judgment's cache key
(docs/judging.md, "Prompts and versions")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypedDict

from campaign.vocabulary import ANSWER_CHECKS, AnswerCheck, PromptTarget

ENTAILMENT_PROMPT_VERSION = "entailment-v1"
ANSWER_PROMPT_VERSION = "answer-v1"


UNKNOWN_ANSWER_CHECK = "answer_check must be one of {choices}, found {found!r}"
GOLD_ANSWERS_REQUIRED = "answer_check {answer_check!r} needs at least one gold answer"
BAD_NUGGET_NUMBER = "nugget numbers must be positive integers, found {found!r}"


class ChatMessage(TypedDict):
    """One chat-completions message."""

    role: Literal["system", "user"]
    content: str


ENTAILMENT_INSTRUCTIONS = """\
You are a fact checker. Read the PASSAGE, then decide if the CLAIM is supported by it.
Answer true if the passage states the claim, even in other words.
Answer false if the passage does not state it or says something different.
Reply in JSON with "entailed" (true or false) and "reason" (one short sentence)."""

_ANSWER_INSTRUCTIONS = """\
You grade an answer to a question.
You get a QUESTION, {inputs} and numbered NUGGETS: facts given as support for the answer.
Assume every nugget is factually correct.
1. Decide whether the ANSWER correctly answers the QUESTION.{rule}
2. For each nugget, say in one short sentence whether it helps to deduce the answer.
3. If the answer is correct, list in "relevant" the numbers of the nuggets that helped \
to deduce it. If the answer is incorrect, "relevant" must be empty.
Reply with a JSON object: "reason" (one short sentence about the answer), "correct" \
(true or false), "nugget_reasons" (a short sentence for each nugget number) and \
"relevant" (a list of nugget numbers)."""

ANSWER_INSTRUCTIONS: dict[AnswerCheck, str] = {
    AnswerCheck.NUGGETS: _ANSWER_INSTRUCTIONS.format(inputs="an ANSWER", rule=""),
    AnswerCheck.GOLD: _ANSWER_INSTRUCTIONS.format(
        inputs="the GOLD ANSWERS, an ANSWER",
        rule=" It is correct only if it agrees with one of the GOLD ANSWERS.",
    ),
    AnswerCheck.BOTH: _ANSWER_INSTRUCTIONS.format(
        inputs="the GOLD ANSWERS, an ANSWER",
        rule=" It is correct only if it agrees with one of the GOLD ANSWERS"
             " and is also correct given the nuggets.",
    ),
}


def entailment_messages(*, passage: str, nugget: str) -> list[ChatMessage]:
    """Bogus-nugget identification: does `passage` entail `nugget`? (entailment-v1)"""
    return [
        {"role": "system", "content": ENTAILMENT_INSTRUCTIONS},
        {"role": "user", "content": f"PASSAGE:\n{passage.strip()}\n\nCLAIM:\n{nugget.strip()}"},
    ]


def answer_messages(
    *,
    question: str,
    answer: str,
    nuggets: Mapping[int, str],
    answer_check: AnswerCheck = AnswerCheck.NUGGETS,
    gold_answers: Sequence[str] = (),
) -> list[ChatMessage]:
    """Answer evaluation with relevant-nugget identification (answer-v1): only the entailed nuggets,
    under their NuggetNums in order; `gold_answers` shown, and required, under "gold" or "both"."""
    if answer_check not in ANSWER_CHECKS:
        choices = tuple(str(check) for check in ANSWER_CHECKS)
        raise ValueError(UNKNOWN_ANSWER_CHECK.format(choices=choices, found=answer_check))
    for number in nuggets:
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ValueError(BAD_NUGGET_NUMBER.format(found=number))
    parts = [f"QUESTION:\n{question.strip()}"]
    if answer_check != "nuggets":
        gold = [text.strip() for text in gold_answers if text.strip()]
        if not gold:
            raise ValueError(GOLD_ANSWERS_REQUIRED.format(answer_check=str(answer_check)))
        parts.append("GOLD ANSWERS:\n" + "\n".join(f"- {text}" for text in gold))
    parts.append(f"ANSWER:\n{answer.strip()}")
    listed = [f"[{number}] {nuggets[number].strip()}" for number in sorted(nuggets)]
    parts.append("NUGGETS:\n" + ("\n".join(listed) if listed else "(none)"))
    return [
        {"role": "system", "content": ANSWER_INSTRUCTIONS[answer_check]},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


# --- RUBRIC / EXAM++ autograding (docs/rubric.md) ---------------------------------
#
# Three more prompts, each versioned like the R2C2 ones: the self-rating of a passage on
# a test-bank item, the generation of a query's test bank, and the `llm` check of an
# extracted answer against an answer key. The grading scale is that of Farzi & Dietz,
# "Pencils Down!", ICTIR 2024, Table 2 (0 = no answer .. 5 = a complete, accurate one),
# said in our own words, once for exam questions and once for nuggets.

RUBRIC_PROMPT_VERSION = "rubric-v1"
TESTBANK_PROMPT_VERSION = "testbank-v1"
ANSWER_KEY_PROMPT_VERSION = "answer-key-v1"

UNKNOWN_PROMPT_TARGET = "a test bank holds {choices}, found {found!r}"
BAD_ITEM_COUNT = "the number of test-bank items to ask for must be 1..{most}, got {n!r}"
KEY_ANSWERS_REQUIRED = "an answer-key check needs at least one key answer"

#: The most items one generation request may ask for (the grammar lists them all).
MAX_GENERATED_ITEMS = 30


#: What the judge drafts unless asked otherwise: the packaged models draft nuggets far
#: more reliably than exam questions with an answer key.
DRAFT_TARGET = PromptTarget.NUGGETS


RUBRIC_INSTRUCTIONS: dict[PromptTarget, str] = {
    PromptTarget.QUESTIONS: """\
You grade how well a PASSAGE answers an exam QUESTION, using only what the passage says.
Grade on this scale:
5: the passage answers the question completely and correctly.
4: it answers the question, with small gaps or small mistakes.
3: it answers part of the question; clear gaps or mistakes remain.
2: it touches on the question, but most of the answer is missing or wrong.
1: it is barely related to the question.
0: it does not answer the question at all.
Reply in JSON with "grade" (an integer from 0 to 5) and "answer": the answer the \
passage gives, in a few words, or "unanswerable" if it gives none.""",
    PromptTarget.NUGGETS: """\
You grade how well a PASSAGE states a NUGGET (a key fact), using only what the passage says.
Grade on this scale:
5: the passage states the nugget completely and correctly.
4: it states the nugget, with small gaps or small mistakes.
3: it states part of the nugget; clear gaps or mistakes remain.
2: it touches on the nugget, but most of it is missing or wrong.
1: it is barely related to the nugget.
0: it does not state the nugget at all.
Reply in JSON with "grade" (an integer from 0 to 5) and "answer": the words of the \
passage that state the nugget, or "not mentioned" if it does not.""",
}

TESTBANK_INSTRUCTIONS: dict[PromptTarget, str] = {
    PromptTarget.QUESTIONS: """\
You write an exam for a search QUERY. Think of what a complete answer to the query must \
contain, and break it into {n} short questions, each asking for one fact or aspect that a \
single passage could answer. No two questions may ask the same thing.
For each question, give in "answers" up to three short correct answers if you are sure \
of them, else an empty list.
Reply in JSON: "items", a list of objects with "text" (the question) and "answers".""",
    PromptTarget.NUGGETS: """\
You list the key facts for a search QUERY. Think of what a complete answer to the query \
must contain, and break it into {n} nuggets: short statements of one fact each that a \
single passage could state. No two nuggets may say the same thing.
Reply in JSON: "items", a list of objects with "text" (the nugget).""",
}

ANSWER_KEY_INSTRUCTIONS = """\
You check an ANSWER to an exam QUESTION against the ANSWER KEY. Reply true if the \
ANSWER gives one of the key's answers: other words or another name for the same thing \
are fine. Reply false if it gives something else, hedges between candidates, or gives \
no answer."""


def rubric_messages(*, passage: str, item: str, target: PromptTarget | str) -> list[ChatMessage]:
    """Self-rating of `passage` on one test-bank `item` (rubric-v1); the passage comes first, so
    consecutive calls on one passage share it as a cached prefix."""
    chosen = _target(target)
    label = "QUESTION" if chosen is PromptTarget.QUESTIONS else "NUGGET"
    return [
        {"role": "system", "content": RUBRIC_INSTRUCTIONS[chosen]},
        {"role": "user", "content": f"PASSAGE:\n{passage.strip()}\n\n{label}:\n{item.strip()}"},
    ]


def bank_items_messages(*, query: str, target: PromptTarget | str, n: int) -> list[ChatMessage]:
    """Generation of `n` test-bank items for a query text (testbank-v1)."""
    chosen = _target(target)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_GENERATED_ITEMS:
        raise ValueError(BAD_ITEM_COUNT.format(most=MAX_GENERATED_ITEMS, n=n))
    return [
        {"role": "system", "content": TESTBANK_INSTRUCTIONS[chosen].format(n=n)},
        {"role": "user", "content": f"QUERY:\n{query.strip()}"},
    ]


def answer_key_messages(*, question: str, answer: str,
                        key_answers: Sequence[str]) -> list[ChatMessage]:
    """The `llm` answer check: does an extracted answer give one of the key's answers?
    (answer-key-v1; the reply is a bare true/false, like the v2 subtasks)"""
    key = [text.strip() for text in key_answers if text.strip()]
    if not key:
        raise ValueError(KEY_ANSWERS_REQUIRED)
    listed = "\n".join(f"- {text}" for text in key)
    return [
        {"role": "system", "content": ANSWER_KEY_INSTRUCTIONS},
        {"role": "user", "content": f"QUESTION:\n{question.strip()}\n\nANSWER KEY:\n{listed}"
                                    f"\n\nANSWER:\n{answer.strip()}"},
    ]


def _target(target: PromptTarget | str) -> PromptTarget:
    try:
        return PromptTarget(target)
    except ValueError:
        choices = " or ".join(repr(str(t)) for t in PromptTarget)
        raise ValueError(UNKNOWN_PROMPT_TARGET.format(choices=choices, found=target)) from None
