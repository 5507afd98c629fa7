"""Versioned prompt templates for the two R2C2 judgments (DESIGN.md section 5).

Each template returns chat `messages`: a system message holding the fixed instructions,
then one user message with the variable parts. The fixed part comes first and is
byte-identical across calls so that vLLM's (and llama.cpp's) prefix cache is reused.

Change a template's text, and you must bump its version: the version is part of every
judgment's provenance and of the cache key, so old judgments stay tied to the old words.
The wording is plain and short on purpose; it must work for a 0.5B model too. The
entailment prompt calls the nugget a CLAIM and asks for the verdict before the reason;
on the packaged models that scored best on a small hand-made set (12/12 for the 1.5B,
where reason-first wording got 11/12). The answer prompt asks for the reason first.

`AnswerCheck` (a track's `answer_check`) is defined here and nowhere else: the judge's
prompts are what it selects, and a pure package can be imported by every app (campaign's
`Track` and campaign file, grading) while it imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Literal, TypedDict

ENTAILMENT_PROMPT_VERSION = "entailment-v1"
ANSWER_PROMPT_VERSION = "answer-v1"


class AnswerCheck(StrEnum):
    """What the judge checks an answer against (per AC track, DESIGN.md section 5).

    A `StrEnum`, so the plain strings stored in `Track.answer_check` compare equal to it.
    """

    NUGGETS = "nuggets"  # the task's own question: correct given the nuggets
    GOLD = "gold"  # against the track's secret gold answer key
    BOTH = "both"  # both of the above


ANSWER_CHECKS: tuple[AnswerCheck, ...] = tuple(AnswerCheck)

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
    """Answer evaluation with relevant-nugget identification (answer-v1).

    `nuggets` maps NuggetNum to text and holds only the entailed nuggets: bogus ones are
    never shown to this step. They are listed in NuggetNum order, each under its own
    number, so the reply can name them. `gold_answers` (the track's secret answer key)
    are shown only when `answer_check` is "gold" or "both", and then are required.
    """
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
