"""RUBRIC / EXAM++ grading, pure part: judge requests, reply parsing and answer checks
(docs/rubric.md, "Grading")."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import snowballstemmer  # type: ignore[import-untyped]
import stopwords  # type: ignore[import-untyped]
from rapidfuzz.distance import Levenshtein

from campaign.vocabulary import PromptTarget
from grading.llm.inputs import JudgeRequest
from grading.llm.parsing import (
    MISSING_FIELD,
    UNEXPECTED_FIELD,
    WRONG_TYPE,
    ReplyParseError,
    VerdictLabel,
    _kind,
    _load_object,
    _typed,
    parse_verdict,
)
from grading.llm.prompts import (
    ANSWER_KEY_PROMPT_VERSION,
    RUBRIC_PROMPT_VERSION,
    TESTBANK_PROMPT_VERSION,
    answer_key_messages,
    bank_items_messages,
    rubric_messages,
)
from grading.llm.schemas import (
    RUBRIC_GRADES,
    answer_key_response_format,
    bank_items_response_format,
    rubric_response_format,
)

#: The grade of a reply that never parsed: low but not 0, so
#: it neither counts as an answer nor silently as "no answer"; a person decides.
UNPARSED_GRADE = 1

#: Extracted answers that say the passage gives none (EXAM++, section 4.2.1, and the
#: nugget prompt's own "not mentioned"), compared after `normalise_phrase`.
UNANSWERABLE_PHRASES = frozenset({
    "unanswerable",
    "not answerable",
    "cannot be answered",
    "no answer",
    "not enough information",
    "unknown",
    "it is not possible to tell",
    "it does not say",
    "it doesn't say",
    "the passage does not say",
    "the passage doesn't say",
    "no relevant information",
    "no information",
    "not mentioned",
    "not stated",
})

#: Answer verification: a match when distance < KEY_MATCH_RATIO * longer length.
KEY_MATCH_RATIO = 0.2

BAD_GRADE = "grade must be one of 0..5, found {found}"
NO_GENERATED_ITEMS = "items holds no item with text"
TOO_MANY_ITEMS = "items holds {found} items; {n} were asked for"

RUBRIC_FIELDS = ("grade", "answer")


@dataclass(frozen=True)
class RubricGrade:
    """A passage's grade on one test-bank item: `self_rated` the judge's (None: never parsed);
    `grade` what counts, 0 when `unanswerable`, UNPARSED_GRADE with `needs_review` if unparsed."""

    grade: int
    answer: str
    self_rated: int | None
    unanswerable: bool = False
    needs_review: bool = False


@dataclass(frozen=True)
class GeneratedItem:
    """A drafted test-bank item: a question (with an optional answer key) or a nugget."""

    text: str
    answers: tuple[str, ...] = ()


def normalise_phrase(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces: how an extracted answer is
    compared with UNANSWERABLE_PHRASES. No stemming or stop words here: "no answer"
    would lose its "no" and equal an answer that is "answer"."""
    return " ".join(re.sub(r"[^\w']+", " ", text.replace("\u2019", "'").lower()).split())


def expresses_unanswerability(answer: str) -> bool:
    """Whether an extracted answer says the passage gives none. An empty answer does
    too: the judge extracted nothing."""
    phrase = normalise_phrase(answer)
    return not phrase or phrase in UNANSWERABLE_PHRASES


def parse_rubric(raw: str) -> RubricGrade:
    """Parse a self-rating reply `{"grade": 0..5, "answer": str}`, strictly: a bad grade is a
    ReplyParseError; an answer that expresses unanswerability makes the grade 0."""
    reply = _load_object(raw, RUBRIC_FIELDS)
    grade = _typed(reply, "grade", int, "an integer")
    if grade not in RUBRIC_GRADES:
        raise ReplyParseError(BAD_GRADE.format(found=grade))
    answer = _typed(reply, "answer", str, "a string").strip()
    if expresses_unanswerability(answer):
        return RubricGrade(grade=0, answer=answer, self_rated=grade, unanswerable=True)
    return RubricGrade(grade=grade, answer=answer, self_rated=grade)


def unparsed_grade() -> RubricGrade:
    """The grade of a reply that never parsed: UNPARSED_GRADE, flagged for review."""
    return RubricGrade(grade=UNPARSED_GRADE, answer="", self_rated=None, needs_review=True)


def settled_grade(label: RubricGrade | None) -> RubricGrade:
    """The grade to store for a judge call's label (None: the reply never parsed)."""
    return label if label is not None else unparsed_grade()


def rubric_request(*, passage: str, item: str,
                   target: PromptTarget | str) -> JudgeRequest[RubricGrade]:
    """Self-rate `passage` on one test-bank `item` (a question or a nugget)."""
    return JudgeRequest(
        kind="rubric",
        prompt_version=RUBRIC_PROMPT_VERSION,
        messages=rubric_messages(passage=passage, item=item, target=target),
        response_format=rubric_response_format(),
        parse=parse_rubric,
    )


def parse_bank_items(raw: str, *, n: int, with_answers: bool) -> tuple[GeneratedItem, ...]:
    """Parse a generated test bank `{"items": [{"text": str, "answers": [str]}]}`: stripped;
    empty and repeated texts and repeated answers dropped; more than `n` items, or none left, is a
    ReplyParseError."""
    reply = _load_object(raw, ("items",))
    listed = _typed(reply, "items", list, "an array")
    if len(listed) > n:
        raise ReplyParseError(TOO_MANY_ITEMS.format(found=len(listed), n=n))
    fields = ("text", "answers") if with_answers else ("text",)
    items: list[GeneratedItem] = []
    seen: set[str] = set()
    for position, entry in enumerate(listed):
        text, given = _generated_item(entry, fields, position)
        text = text.strip()
        if not text or normalise_phrase(text) in seen:
            continue
        seen.add(normalise_phrase(text))
        answers = dict.fromkeys(a.strip() for a in given if a.strip())
        items.append(GeneratedItem(text=text, answers=tuple(answers)))
    if not items:
        raise ReplyParseError(NO_GENERATED_ITEMS)
    return tuple(items)


def bank_items_request(*, query: str, target: PromptTarget | str,
                       n: int) -> JudgeRequest[tuple[GeneratedItem, ...]]:
    """Ask for `n` concise test-bank items for a query text (exam questions with an
    optional answer key, or nuggets)."""
    messages = bank_items_messages(query=query, target=target, n=n)  # checks target and n
    with_answers = PromptTarget(target) is PromptTarget.QUESTIONS
    return JudgeRequest(
        kind="testbank",
        prompt_version=TESTBANK_PROMPT_VERSION,
        messages=messages,
        response_format=bank_items_response_format(n=n, with_answers=with_answers),
        parse=functools.partial(parse_bank_items, n=n, with_answers=with_answers),
    )


@functools.cache
def _stop_words() -> frozenset[str]:
    return frozenset(word for word in stopwords.get_stopwords("english") if word)


def normalise_answer(text: str) -> str:
    """EXAM++'s answer normalisation: lower case, stop words removed, Snowball stems,
    joined by single spaces. An answer of stop words only ("The Who") keeps them,
    stemmed, rather than vanishing and matching every other such answer."""
    words = re.findall(r"\w+(?:'\w+)*", text.replace("\u2019", "'").lower())
    content = [word for word in words if word not in _stop_words()] or words
    # A stemmer object holds per-call state: one per call keeps this thread-safe.
    return " ".join(snowballstemmer.stemmer("english").stemWords(content))


def answer_matches_key(answer: str, key_answers: Sequence[str]) -> bool:
    """EXAM++ answer verification (`answer_check: key`; Farzi & Dietz, LLM4Eval 2024): a match when
    the normalised strings' Levenshtein distance is under KEY_MATCH_RATIO (20%) of the longer."""
    given = normalise_answer(answer)
    if not given:
        return False
    for key in key_answers:
        expected = normalise_answer(key)
        if not expected:
            continue
        longest = max(len(given), len(expected))
        if Levenshtein.distance(given, expected) < KEY_MATCH_RATIO * longest:
            return True
    return False


def answer_key_request(*, question: str, answer: str,
                       key_answers: Sequence[str]) -> JudgeRequest[VerdictLabel]:
    """`answer_check: llm`: does the extracted `answer` give one of `key_answers`?
    The reply is a bare true/false (the judge's probability is read off its token)."""
    return JudgeRequest(
        kind="answer_key",
        prompt_version=ANSWER_KEY_PROMPT_VERSION,
        messages=answer_key_messages(question=question, answer=answer,
                                     key_answers=key_answers),
        response_format=answer_key_response_format(),
        parse=functools.partial(parse_verdict, field="correct"),
        verdict_field="correct",
    )


def _generated_item(entry: object, fields: tuple[str, ...],
                    position: int) -> tuple[str, list[str]]:
    """One generated item's text and answers, held to the same strictness as a reply."""
    where = f"items[{position}]"
    if not isinstance(entry, dict):
        raise ReplyParseError(WRONG_TYPE.format(field=where, expected="an object",
                                                found=_kind(entry)))
    for field in fields:
        if field not in entry:
            raise ReplyParseError(MISSING_FIELD.format(field=f"{where}.{field}"))
    for field in entry:
        if field not in fields:
            raise ReplyParseError(UNEXPECTED_FIELD.format(field=f"{where}.{field}"))
    text = entry["text"]
    if not isinstance(text, str):
        raise ReplyParseError(WRONG_TYPE.format(field=f"{where}.text", expected="a string",
                                                found=_kind(text)))
    answers = entry.get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ReplyParseError(WRONG_TYPE.format(field=f"{where}.answers",
                                                expected="an array of strings",
                                                found=_kind(answers)))
    return text, answers
