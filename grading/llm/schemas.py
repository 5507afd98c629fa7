"""JSON schemas sent as `response_format`, in the subset vLLM and llama.cpp both compile into a
grammar, their property order chosen for small models (docs/judging.md, "Replies")."""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

JsonObject = dict[str, Any]

ENTAILMENT_SCHEMA_NAME = "r2c2_entailment"
ANSWER_SCHEMA_NAME = "r2c2_answer"

REASON_MAX_LENGTH = 300
_REASON: JsonObject = {"type": "string", "maxLength": REASON_MAX_LENGTH}

ENTAILMENT_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "entailed": {"type": "boolean"},
        "reason": _REASON,
    },
    "required": ["entailed", "reason"],
    "additionalProperties": False,
}


def answer_schema(nugget_nums: Collection[int]) -> JsonObject:
    """The answer-evaluation schema for a prompt that showed `nugget_nums`."""
    numbers = sorted(set(nugget_nums))
    keys = [str(number) for number in numbers]
    relevant: JsonObject = {"type": "array", "items": {"type": "integer"}, "maxItems": 0}
    if numbers:
        relevant = {
            "type": "array",
            "items": {"type": "integer", "enum": numbers},
            "maxItems": len(numbers),
        }
    return {
        "type": "object",
        "properties": {
            "reason": dict(_REASON),
            "correct": {"type": "boolean"},
            "nugget_reasons": {
                "type": "object",
                "properties": {key: dict(_REASON) for key in keys},
                "required": keys,
                "additionalProperties": False,
            },
            "relevant": relevant,
        },
        "required": ["reason", "correct", "nugget_reasons", "relevant"],
        "additionalProperties": False,
    }


def response_format(name: str, schema: JsonObject) -> JsonObject:
    """Wrap `schema` as the chat-completions `response_format` parameter."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


def entailment_response_format() -> JsonObject:
    """`response_format` for bogus-nugget identification."""
    return response_format(ENTAILMENT_SCHEMA_NAME, copy.deepcopy(ENTAILMENT_SCHEMA))


def answer_response_format(nugget_nums: Collection[int]) -> JsonObject:
    """`response_format` for answer evaluation over the nuggets `nugget_nums`."""
    return response_format(ANSWER_SCHEMA_NAME, answer_schema(nugget_nums))


# --- RUBRIC / EXAM++ autograding (docs/rubric.md) ---------------------------------

RUBRIC_SCHEMA_NAME = "rubric_grade"
TESTBANK_SCHEMA_NAME = "rubric_testbank"
ANSWER_KEY_SCHEMA_NAME = "rubric_answer_key"

#: The self-rating scale of "Pencils Down!" (Farzi & Dietz, ICTIR 2024), Table 2.
RUBRIC_GRADES = (0, 1, 2, 3, 4, 5)
ANSWER_MAX_LENGTH = 300  # an extracted answer or mention: a few words, kept for review
ITEM_MAX_LENGTH = 300  # a generated question or nugget
MAX_KEY_ANSWERS = 3  # answers the generator may give per question

# The grade first, then the answer: `{"grade": 0..5, "answer": ...}`.
RUBRIC_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "grade": {"type": "integer", "enum": list(RUBRIC_GRADES)},
        "answer": {"type": "string", "maxLength": ANSWER_MAX_LENGTH},
    },
    "required": ["grade", "answer"],
    "additionalProperties": False,
}


def bank_items_schema(*, n: int, with_answers: bool) -> JsonObject:
    """A generated test bank: `{"items": [{"text": ..., "answers": [...]}, ...]}`, 1..n
    items; `answers` (an answer key, up to MAX_KEY_ANSWERS) only for exam questions."""
    item: JsonObject = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": ITEM_MAX_LENGTH}},
        "required": ["text"],
        "additionalProperties": False,
    }
    if with_answers:
        item["properties"]["answers"] = {
            "type": "array",
            "items": {"type": "string", "maxLength": ANSWER_MAX_LENGTH},
            "maxItems": MAX_KEY_ANSWERS,
        }
        item["required"] = ["text", "answers"]
    return {
        "type": "object",
        "properties": {"items": {"type": "array", "items": item, "minItems": 1, "maxItems": n}},
        "required": ["items"],
        "additionalProperties": False,
    }


def rubric_response_format() -> JsonObject:
    """`response_format` for the self-rating of a passage on one test-bank item."""
    return response_format(RUBRIC_SCHEMA_NAME, copy.deepcopy(RUBRIC_SCHEMA))


def bank_items_response_format(*, n: int, with_answers: bool) -> JsonObject:
    """`response_format` for the generation of up to `n` test-bank items."""
    return response_format(TESTBANK_SCHEMA_NAME, bank_items_schema(n=n, with_answers=with_answers))


def answer_key_response_format() -> JsonObject:
    """`response_format` for the `llm` answer check: a bare true/false, as the v2
    subtasks reply, so the judge's probability can be read off its one token."""
    return response_format(ANSWER_KEY_SCHEMA_NAME, {"type": "boolean"})
