"""RUBRIC / EXAM++ grading, pure part: prompts, schemas, reply parsing and the answer
checks (docs/rubric.md; Farzi & Dietz, "Pencils Down!", ICTIR 2024, Table 2;
"EXAM++", LLM4Eval 2024, section 4.2.1)."""

from __future__ import annotations

import json
import re

import jsonschema  # type: ignore[import-untyped]  # drf-spectacular needs it; no hints
import pytest

from campaign.vocabulary import PromptTarget, RubricAnswerCheck
from grading.llm import prompts
from grading.llm.inputs import DecodingParams
from grading.llm.parsing import ReplyParseError, VerdictLabel
from grading.llm.prompts import (
    ANSWER_KEY_PROMPT_VERSION,
    RUBRIC_PROMPT_VERSION,
    TESTBANK_PROMPT_VERSION,
    bank_items_messages,
    rubric_messages,
)
from grading.llm.rubric import (
    BAD_GRADE,
    NO_GENERATED_ITEMS,
    TOO_MANY_ITEMS,
    UNANSWERABLE_PHRASES,
    UNPARSED_GRADE,
    GeneratedItem,
    RubricGrade,
    answer_key_request,
    answer_matches_key,
    bank_items_request,
    expresses_unanswerability,
    normalise_answer,
    parse_bank_items,
    parse_rubric,
    rubric_request,
    settled_grade,
)
from grading.llm.schemas import RUBRIC_SCHEMA, bank_items_schema

PASSAGE = "The Matrix (1999) was written and directed by the Wachowskis."


# --- The self-rating prompt and its schema --------------------------------------


def test_the_self_rating_prompt_writes_out_the_0_to_5_scale_and_the_reply_fields():
    request = rubric_request(passage=PASSAGE, item="Who directed The Matrix?",
                             target="questions")

    system = request.messages[0]["content"]
    assert request.kind == "rubric" and request.prompt_version == RUBRIC_PROMPT_VERSION
    assert RUBRIC_PROMPT_VERSION == "rubric-v1"
    # Table 2 of "Pencils Down!": one line per grade, 5 down to 0
    assert [line[:2] for line in system.splitlines() if re.match(r"\d:", line)] == [
        "5:", "4:", "3:", "2:", "1:", "0:"]
    assert '"grade"' in system and '"answer"' in system
    assert request.messages[1]["content"] == (
        f"PASSAGE:\n{PASSAGE}\n\nQUESTION:\nWho directed The Matrix?")


def test_the_fixed_instructions_come_first_and_differ_only_by_target():
    question = rubric_messages(passage="P one.", item="Q?", target="questions")
    other = rubric_messages(passage="P two.", item="Other?", target=PromptTarget.QUESTIONS)
    nugget = rubric_messages(passage="P one.", item="A fact.", target="nuggets")

    assert question[0] == other[0]  # byte-identical: the server's prefix cache reuses it
    assert nugget[0]["content"] == prompts.RUBRIC_INSTRUCTIONS[PromptTarget.NUGGETS]
    assert nugget[1]["content"] == "PASSAGE:\nP one.\n\nNUGGET:\nA fact."


def test_the_self_rating_schema_is_the_grade_0_to_5_then_the_answer():
    schema = rubric_request(passage="P", item="Q?", target="questions").response_format

    inner = schema["json_schema"]["schema"]
    assert schema["json_schema"]["name"] == "rubric_grade"
    assert list(inner["properties"]) == ["grade", "answer"]
    assert inner["properties"]["grade"] == {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]}
    jsonschema.validate({"grade": 5, "answer": "the Wachowskis"}, inner)
    for bad in ({"grade": 6, "answer": ""}, {"grade": 3}, {"grade": 3, "answer": "", "x": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, inner)


def test_an_unknown_target_is_refused_by_name():
    with pytest.raises(ValueError) as refused:
        rubric_messages(passage="P", item="I", target="facts")

    assert str(refused.value) == prompts.UNKNOWN_PROMPT_TARGET.format(
        choices="'questions' or 'nuggets'", found="facts")


def test_the_same_pair_hashes_the_same_and_another_item_differently():
    decoding = DecodingParams()
    first = rubric_request(passage=PASSAGE, item="Who directed it?", target="questions")
    again = rubric_request(passage=PASSAGE, item="Who directed it?", target="questions")
    edited = rubric_request(passage=PASSAGE, item="Who wrote it?", target="questions")

    key = first.input_hash(model="m", decoding=decoding)
    assert again.input_hash(model="m", decoding=decoding) == key
    assert edited.input_hash(model="m", decoding=decoding) != key


# --- Parsing a self-rating ------------------------------------------------------


def test_a_good_reply_keeps_the_grade_and_the_extracted_answer():
    grade = parse_rubric('{"grade": 4, "answer": " the Wachowskis "}')

    assert grade == RubricGrade(grade=4, answer="the Wachowskis", self_rated=4)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"grade": 6, "answer": "x"}', BAD_GRADE.format(found=6)),
        ('{"grade": -1, "answer": "x"}', BAD_GRADE.format(found=-1)),
        ('{"grade": 4.0, "answer": "x"}', "field 'grade' must be an integer, found a number 4.0"),
        ('{"grade": "4", "answer": "x"}', "field 'grade' must be an integer, found a string"),
        ('{"grade": true, "answer": "x"}', "field 'grade' must be an integer, found a boolean"),
        ('{"grade": 4}', "reply lacks the field 'answer'"),
        ('{"grade": 4, "answer": "x", "why": "y"}', "reply has an unexpected field 'why'"),
        ("Grade: 4", "reply is not valid JSON"),
    ],
)
def test_a_reply_out_of_range_or_out_of_shape_does_not_parse(raw, message):
    with pytest.raises(ReplyParseError) as refused:
        parse_rubric(raw)

    assert str(refused.value).startswith(message)


def test_a_reply_that_never_parses_counts_as_grade_1_for_review():
    # The client retries, then returns the call with no label (needs_review).
    settled = settled_grade(None)

    assert (settled.grade, settled.needs_review, settled.self_rated) == (UNPARSED_GRADE, True,
                                                                         None)
    assert UNPARSED_GRADE == 1
    parsed = parse_rubric('{"grade": 2, "answer": "1999"}')
    assert settled_grade(parsed) is parsed and not parsed.needs_review


@pytest.mark.parametrize(
    "answer",
    ["unanswerable", "Unanswerable.", "No answer", "not enough information!", "UNKNOWN",
     "It does not say.", "It doesn\u2019t say", "no relevant information", "Not mentioned",
     "", "  "],
)
def test_an_answer_that_says_there_is_none_makes_the_grade_0(answer):
    grade = parse_rubric(json.dumps({"grade": 5, "answer": answer}))

    assert (grade.grade, grade.self_rated, grade.unanswerable) == (0, 5, True)


@pytest.mark.parametrize("answer", ["No", "Unknown Soldier", "not in 1999 but 2003",
                                    "answer"])
def test_an_answer_that_merely_contains_such_words_keeps_its_grade(answer):
    assert not expresses_unanswerability(answer)
    assert parse_rubric(json.dumps({"grade": 4, "answer": answer})).grade == 4


def test_the_design_phrases_are_all_in_the_list():
    design = {"unanswerable", "no answer", "not enough information", "unknown",
              "it does not say", "no relevant information"}  # EXAM++, section 4.2.1

    assert design <= UNANSWERABLE_PHRASES


# --- Test-bank generation -------------------------------------------------------


def test_the_testbank_prompt_asks_for_n_items_for_the_query():
    request = bank_items_request(query="  history of sound film ", target="questions", n=7)

    assert request.kind == "testbank" and request.prompt_version == TESTBANK_PROMPT_VERSION
    assert "7 short questions" in request.messages[0]["content"]
    assert request.messages[1]["content"] == "QUERY:\nhistory of sound film"
    schema = request.response_format["json_schema"]["schema"]
    assert schema["properties"]["items"]["maxItems"] == 7
    assert schema["properties"]["items"]["items"]["required"] == ["text", "answers"]


def test_a_nugget_bank_has_no_answer_key():
    schema = bank_items_schema(n=3, with_answers=False)
    jsonschema.validate({"items": [{"text": "Sound film began in 1927."}]}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"items": [{"text": "x", "answers": []}]}, schema)

    request = bank_items_request(query="q", target="nuggets", n=3)
    assert "3 nuggets" in request.messages[0]["content"]
    assert request.parse('{"items": [{"text": "A fact."}]}') == (GeneratedItem("A fact."),)


@pytest.mark.parametrize("n", [0, 31, True])
def test_the_testbank_prompt_refuses_an_item_count_outside_1_to_30(n):
    with pytest.raises(ValueError) as refused:
        bank_items_messages(query="q", target="questions", n=n)

    assert str(refused.value) == prompts.BAD_ITEM_COUNT.format(most=30, n=n)


def test_a_generated_bank_is_stripped_and_repeats_are_dropped():
    raw = json.dumps({"items": [
        {"text": " Who directed The Jazz Singer? ",
         "answers": ["Alan Crosland", " ", "Alan Crosland"]},
        {"text": "who directed the jazz singer", "answers": []},  # the same question again
        {"text": "  ", "answers": ["x"]},  # no text
        {"text": "When was it released?", "answers": []},
    ]})

    assert parse_bank_items(raw, n=4, with_answers=True) == (
        GeneratedItem("Who directed The Jazz Singer?", ("Alan Crosland",)),
        GeneratedItem("When was it released?"),
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"items": [{"text": "a", "answers": []}, {"text": "b", "answers": []}]}',
         TOO_MANY_ITEMS.format(found=2, n=1)),
        ('{"items": [{"text": " ", "answers": []}]}', NO_GENERATED_ITEMS),
        ('{"items": []}', NO_GENERATED_ITEMS),
        ('{"items": ["a question"]}', "field 'items[0]' must be an object"),
        ('{"items": [{"text": "a"}]}', "reply lacks the field 'items[0].answers'"),
        ('{"items": [{"text": 3, "answers": []}]}', "field 'items[0].text' must be a string"),
        ('{"items": [{"text": "a", "answers": [1]}]}',
         "field 'items[0].answers' must be an array of strings"),
    ],
)
def test_a_generated_bank_out_of_shape_does_not_parse(raw, message):
    with pytest.raises(ReplyParseError) as refused:
        parse_bank_items(raw, n=1, with_answers=True)

    assert str(refused.value).startswith(message)


# --- Answer verification (EXAM++) -----------------------------------------------


@pytest.mark.parametrize(
    ("answer", "key", "matches"),
    [
        # normalised to "matrix" both: stop word "the" gone, lower case; distance 0
        ("The Matrix", ["matrix"], True),
        # stems: "directed"/"direct" -> "direct"; "Wachowskis"/"wachowski" -> "wachowski"
        ("directed by the Wachowskis", ["Wachowski direct"], False),  # word order counts
        ("the Wachowskis", ["Wachowski"], True),
        # "stanley kubrik" vs "stanley kubrick": distance 1 < 0.2 * 15 = 3
        ("Stanley Kubrik", ["Stanley Kubrick"], True),
        # "1927" vs "1929": distance 1, not < 0.2 * 4 = 0.8: a different year
        ("1927", ["1929"], False),
        # "kubrick" vs "kubrick" after the second key; the first does not match
        ("Kubrick", ["Spielberg", "Kubrick"], True),
        ("Steven Spielberg", ["Stanley Kubrick"], False),
        # stop words only: kept rather than emptied, so "The Who" is not "The"
        ("The Who", ["the who"], True),
        ("The Who", ["The"], False),
        ("", ["anything"], False),
    ],
)
def test_an_answer_matches_its_key_under_20_percent_edit_distance(answer, key, matches):
    assert answer_matches_key(answer, key) is matches


def test_the_normalisation_is_lower_case_stopped_and_stemmed():
    # Snowball (Porter2) English: running -> run, films -> film, directed -> direct
    assert normalise_answer("The films were Running, DIRECTED") == "film run direct"


def test_the_llm_answer_check_is_a_bare_verdict_on_the_key():
    request = answer_key_request(question="Who directed The Matrix?",
                                 answer="the Wachowskis", key_answers=["Wachowskis", " "])

    assert request.kind == "answer_key"
    assert request.prompt_version == ANSWER_KEY_PROMPT_VERSION == "answer-key-v1"
    assert request.verdict_field == "correct"
    assert request.messages[1]["content"] == (
        "QUESTION:\nWho directed The Matrix?\n\nANSWER KEY:\n- Wachowskis\n\n"
        "ANSWER:\nthe Wachowskis")
    assert request.response_format["json_schema"]["schema"] == {"type": "boolean"}
    assert request.parse("true") == VerdictLabel(verdict=True)
    with pytest.raises(ReplyParseError):
        request.parse('"yes"')


def test_the_llm_answer_check_needs_a_key():
    with pytest.raises(ValueError, match=re.escape(prompts.KEY_ANSWERS_REQUIRED)):
        answer_key_request(question="Q", answer="A", key_answers=[" "])


def test_a_tracks_answer_check_is_none_key_or_llm():
    assert [str(check) for check in RubricAnswerCheck] == ["none", "key", "llm"]
    assert RUBRIC_SCHEMA["required"] == ["grade", "answer"]
