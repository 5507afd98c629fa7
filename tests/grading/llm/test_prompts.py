"""Prompt templates, reply schemas and judge requests (grading.llm.prompts/schemas/inputs)."""

from __future__ import annotations

import hashlib

import jsonschema  # type: ignore[import-untyped]  # drf-spectacular needs it; no hints
import pytest

from campaign.vocabulary import ANSWER_CHECKS, AnswerCheck
from grading.llm import prompts
from grading.llm.inputs import DecodingParams, input_hash
from grading.llm.prompts import answer_messages, entailment_messages
from grading.llm.schemas import answer_schema, entailment_response_format
from grading.llm.subtasks import ENTAILMENT_V2, entailment_v2

NUGGETS = {2: "Anthony Mackie plays Captain America.", 1: "Mackie starred in the 2004 film."}


def test_entailment_prompt_puts_the_fixed_instructions_first() -> None:
    first = entailment_messages(passage="P one.", nugget="N one.")
    second = entailment_messages(passage="P two.", nugget="N two.")

    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0] == second[0]
    assert first[1]["content"] == "PASSAGE:\nP one.\n\nCLAIM:\nN one."


def test_answer_prompt_lists_the_nuggets_under_their_own_numbers_in_order() -> None:
    messages = answer_messages(question="Who?", answer="Anthony Mackie", nuggets=NUGGETS)

    assert messages[0]["content"] == prompts.ANSWER_INSTRUCTIONS[AnswerCheck.NUGGETS]
    assert messages[1]["content"] == (
        "QUESTION:\nWho?\n\nANSWER:\nAnthony Mackie\n\nNUGGETS:\n"
        "[1] Mackie starred in the 2004 film.\n[2] Anthony Mackie plays Captain America."
    )


def test_answer_prompt_says_so_when_no_nugget_was_entailed() -> None:
    messages = answer_messages(question="Who?", answer="Nobody", nuggets={})

    assert messages[1]["content"].endswith("NUGGETS:\n(none)")


def test_answer_prompt_shows_gold_answers_only_when_the_track_checks_them() -> None:
    plain = answer_messages(question="Q", answer="A", nuggets=NUGGETS, gold_answers=["G"])
    gold = answer_messages(question="Q", answer="A", nuggets=NUGGETS, answer_check=AnswerCheck.GOLD,
                           gold_answers=["Anthony Mackie", " A. Mackie "])

    assert "GOLD" not in plain[1]["content"]
    assert "GOLD ANSWERS:\n- Anthony Mackie\n- A. Mackie\n\nANSWER:" in gold[1]["content"]
    assert gold[0]["content"] == prompts.ANSWER_INSTRUCTIONS[AnswerCheck.GOLD]


@pytest.mark.parametrize("answer_check", ["gold", "both"])
def test_answer_prompt_refuses_a_gold_check_without_gold_answers(answer_check: str) -> None:
    with pytest.raises(ValueError) as refused:
        answer_messages(question="Q", answer="A", nuggets={}, answer_check=answer_check,  # type: ignore[arg-type]
                        gold_answers=[" "])

    assert str(refused.value) == prompts.GOLD_ANSWERS_REQUIRED.format(answer_check=answer_check)


def test_answer_prompt_refuses_an_unknown_answer_check() -> None:
    with pytest.raises(ValueError, match="answer_check must be one of"):
        answer_messages(question="Q", answer="A", nuggets={}, answer_check="vibes")  # type: ignore[arg-type]


@pytest.mark.parametrize("number", [0, -1, True, "1"])
def test_answer_prompt_refuses_a_nugget_number_that_is_not_a_positive_integer(
    number: object,
) -> None:
    with pytest.raises(ValueError) as refused:
        answer_messages(question="Q", answer="A", nuggets={number: "text"})  # type: ignore[dict-item]

    assert str(refused.value) == prompts.BAD_NUGGET_NUMBER.format(found=number)


def test_every_answer_check_has_its_own_fixed_instructions() -> None:
    texts = {check: prompts.ANSWER_INSTRUCTIONS[check] for check in ANSWER_CHECKS}

    assert len(set(texts.values())) == 3
    assert "GOLD ANSWERS" not in texts[AnswerCheck.NUGGETS]
    assert "also correct given the nuggets" in texts[AnswerCheck.BOTH]


def test_the_entailment_schema_accepts_a_good_reply_and_refuses_extras() -> None:
    schema = entailment_response_format()["json_schema"]["schema"]

    jsonschema.validate({"entailed": True, "reason": "says so"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"entailed": True, "reason": "r", "x": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"entailed": "yes", "reason": "r"}, schema)


def test_the_answer_schema_allows_only_the_nuggets_shown() -> None:
    schema = answer_schema([3, 1])
    good = {"reason": "r", "correct": True, "nugget_reasons": {"1": "a", "3": "b"},
            "relevant": [3]}

    jsonschema.validate(good, schema)
    for bad in ({**good, "relevant": [2]},
                {**good, "nugget_reasons": {"1": "a"}},
                {**good, "nugget_reasons": {"1": "a", "3": "b", "2": "c"}},
                {**good, "reason": "x" * 301}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    assert list(schema["properties"]) == ["reason", "correct", "nugget_reasons", "relevant"]


def test_the_answer_schema_without_nuggets_allows_an_empty_list_only() -> None:
    schema = answer_schema([])

    jsonschema.validate({"reason": "r", "correct": False, "nugget_reasons": {},
                         "relevant": []}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"reason": "r", "correct": True, "nugget_reasons": {},
                             "relevant": [1]}, schema)


def test_the_entailment_schema_is_a_fresh_copy_every_time() -> None:
    first = entailment_response_format()
    first["json_schema"]["schema"]["properties"]["entailed"]["type"] = "string"

    assert entailment_response_format()["json_schema"]["schema"]["properties"]["entailed"] == {
        "type": "boolean"}


def test_a_request_parses_the_replies_of_its_own_kind() -> None:
    entailment = entailment_v2(passage="P", nugget="N")

    assert entailment.kind == "entailment"
    assert entailment.prompt_version == ENTAILMENT_V2
    assert entailment.parse("false").verdict is False


def test_the_input_hash_is_stable_and_changes_with_every_part_of_the_input() -> None:
    request = entailment_v2(passage="P", nugget="N")
    decoding = DecodingParams()
    key = request.input_hash(model="m", decoding=decoding)

    assert key == entailment_v2(passage="P", nugget="N").input_hash(
        model="m", decoding=DecodingParams(temperature=0, max_tokens=1024, seed=0))
    assert len(key) == 64
    others = {
        entailment_v2(passage="P2", nugget="N").input_hash(model="m", decoding=decoding),
        request.input_hash(model="m2", decoding=decoding),
        request.input_hash(model="m", decoding=DecodingParams(seed=1)),
        input_hash(prompt_version="entailment-v3", model="m", messages=request.messages,
                   decoding=decoding, response_format=request.response_format),
    }
    assert key not in others
    assert len(others) == 4


def test_the_input_hash_is_a_sha256_of_canonical_json() -> None:
    key = input_hash(prompt_version="v", model="m", messages=[{"role": "user", "content": "é"}],
                     decoding=DecodingParams())

    # Pinned: a change of this encoding would orphan every cached judgment.
    canonical = ('{"decoding":{"max_tokens":1024,"seed":0,"temperature":0.0},'
                 '"messages":[{"content":"é","role":"user"}],"model":"m",'
                 '"prompt_version":"v","response_format":null}')
    assert key == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
