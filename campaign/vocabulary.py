"""The campaign's own words for what its tracks ask of the judge: pure, importing no
Django, so the judge's prompts (grading.llm) can select on them too."""

from __future__ import annotations

from enum import StrEnum


class AnswerCheck(StrEnum):
    """What the judge checks an AC track's answers against (`answer_check`); a `StrEnum`, so it
    equals the plain strings stored in `Track.answer_check`."""

    NUGGETS = "nuggets"  # the task's own question: correct given the nuggets
    GOLD = "gold"  # against the track's secret gold answer key
    BOTH = "both"  # both of the above


ANSWER_CHECKS: tuple[AnswerCheck, ...] = tuple(AnswerCheck)


class RubricAnswerCheck(StrEnum):
    """How a ranking/response track verifies an extracted answer (its `answer_check`)."""

    NONE = "none"  # the self-rated grade alone
    KEY = "key"  # normalised edit distance to the item's answer key (EXAM++)
    LLM = "llm"  # the judge compares the answer with the key (ANSWER_KEY_INSTRUCTIONS)


class PromptTarget(StrEnum):
    """What a test bank holds: exam questions or nuggets (the workbench's `prompt_target`)."""

    QUESTIONS = "questions"
    NUGGETS = "nuggets"
