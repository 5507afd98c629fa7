"""Inputs whose prompts start alike are judged one after another, the groups side by side
(grading.openai_judge.shared_prefixes): the server then computes each shared start once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from grading.judge import AnswerInput, EntailmentInput, JudgeInput, JudgeOutcome, RubricInput
from grading.llm.calls import JudgeConfig
from grading.openai_judge import OpenAIJudge, shared_prefixes

ALIEN = "the film alien came out in the late seventies"
JAWS = "the film jaws came out in the mid seventies"


def test_entailments_of_one_passage_and_ratings_of_one_passage_form_groups() -> None:
    inputs: list[JudgeInput] = [
        EntailmentInput(passage=ALIEN, nugget="alien came out"),
        EntailmentInput(passage=JAWS, nugget="jaws came out"),
        EntailmentInput(passage=ALIEN, nugget="it is a film"),
        AnswerInput(question="q", answer="a", nuggets=()),
        AnswerInput(question="q", answer="a", nuggets=()),
        RubricInput(passage=ALIEN, item="when?", item_text_hash="h1", target="questions"),
        RubricInput(passage=ALIEN, item="who?", item_text_hash="h2", target="questions"),
        RubricInput(passage=ALIEN, item="who?", item_text_hash="h2", target="nuggets"),
    ]

    assert shared_prefixes(inputs) == [[0, 2], [1], [3], [4], [5, 6], [7]]


def test_a_group_is_judged_one_input_at_a_time_and_the_groups_side_by_side(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    in_flight: Counter[str] = Counter()
    most: Counter[str] = Counter()
    together: list[int] = []

    async def entailment(session: object, item: EntailmentInput) -> JudgeOutcome:
        in_flight[item.passage] += 1
        most[item.passage] = max(most[item.passage], in_flight[item.passage])
        together.append(sum(in_flight.values()))
        for _ in range(3):  # let every other ready call start meanwhile
            await asyncio.sleep(0)
        in_flight[item.passage] -= 1
        return JudgeOutcome(label={"entailed": True}, reason="", nugget_reasons={},
                            raw_output="", prompt_tokens=None, completion_tokens=None,
                            latency_seconds=0.0, attempts=0, needs_review=False)

    monkeypatch.setattr("grading.decisions.DecisionSession.entailment", entailment)
    inputs = [EntailmentInput(passage=passage, nugget=f"{passage}, {word}")
              for passage, count in ((ALIEN, 3), (JAWS, 2)) for word in ("so", "yes", "in")[:count]]
    judge = OpenAIJudge(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m"))

    outcomes = judge.judge_many(inputs)

    assert len(outcomes) == len(inputs)
    assert most == {ALIEN: 1, JAWS: 1}  # never two calls of a group at once
    assert max(together) == 2  # but the groups side by side
