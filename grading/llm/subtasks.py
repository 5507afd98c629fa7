"""The judge's questions as simple yes/no subtasks (prompt versions v2), one per call, the reply
a bare true/false, reasons on demand (docs/judging.md, "Prompts and versions", "Replies")."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from grading.llm.inputs import JudgeRequest, VerdictField
from grading.llm.parsing import VerdictLabel, parse_verdict
from grading.llm.prompts import ChatMessage
from grading.llm.schemas import REASON_MAX_LENGTH, JsonObject, response_format

Subtask = Literal["entailment", "gold", "nuggets", "relevance"]

#: The composite versions stored on judgments; each names its subtasks' wording.
ENTAILMENT_V2 = "entailment-v2"
ANSWER_V2 = "answer-v2"


@dataclass(frozen=True)
class SubtaskPrompt:
    """A subtask's wording, the field its verdict fills, and `true_above`: the judge's probability
    of "true" from which the verdict is "true" (the packaged models lean to "true")."""

    version: str
    field: VerdictField
    instructions: str
    true_above: float = 0.5

    @property
    def decision(self) -> str:
        """The wording's version and the threshold: what a verdict depends on."""
        return self.version if self.true_above == 0.5 else f"{self.version}@{self.true_above}"


SUBTASKS: dict[Subtask, SubtaskPrompt] = {
    "entailment": SubtaskPrompt("entailment-v2", "entailed", """\
You check claims against a passage. Reply true only if the PASSAGE states the CLAIM, \
possibly in other words or as a direct consequence of what it says. Reply false if \
the claim changes a name, number or date, adds something the passage does not say, \
gives a fact to the wrong person or film, or if only part of the claim is stated.""",
        # Qwen2.5-Coder-1.5B says "true" too easily: on the dev set's 168 claims the
        # rule leaves to it, 74.8% right at 0.5 and 77.9% at 0.9; cross-validated
        # (threshold chosen on the other folds) 77.0% of all 226, rule included. The
        # first wording (v1) did no better: 76.5% (docs/judging.md).
        true_above=0.9),
    "gold": SubtaskPrompt("gold-v2", "correct", """\
You compare an ANSWER with the GOLD ANSWER to a QUESTION. Reply true if the ANSWER \
gives the gold answer: other words, another name for the same thing, or extra \
explanation are fine. Reply false if it gives something else, hedges between \
candidates, or gives no answer.""",
        # Qwen2.5-Coder-1.5B says "true" to hedges and half answers. On the dev set, with
        # the key's rules first: 86.1% of 79 right at 0.5, 98.7% at 0.75, the most
        # accurate threshold; 98.7% cross-validated.
        true_above=0.75),
    "nuggets": SubtaskPrompt("nuggets-v2", "correct", """\
You grade an ANSWER to a QUESTION. The NUGGETS are facts; assume each is true. Reply \
true if the ANSWER correctly answers the QUESTION. Reply false if it is wrong, hedges \
between candidates, or gives no answer.""",
        # Dev set, 79 answers: 60.8% right at 0.5, 73.4% at 0.8; 68.4% cross-validated.
        true_above=0.8),
    "relevance": SubtaskPrompt("relevance-v2", "relevant", """\
An ANSWER to a QUESTION is correct. Reply true if the NUGGET states a fact that helps \
to reach that answer. Reply false if it is beside the point: about something the \
question does not ask.""",
        # At 0.5 it called nearly every nugget relevant: 46.5% of the dev set's 86 nuggets
        # of correct answers right; 91.9% at 0.85, 88.4% cross-validated.
        true_above=0.85),
}

EXPLAIN_VERSION = "explain-v2"
EXPLAIN_INSTRUCTIONS = "In one short sentence, say why the verdict below is {verdict}."


def _verdict_format(field: VerdictField) -> JsonObject:
    return response_format(f"r2c2_{field}", {"type": "boolean"})


def _request(subtask: Subtask, user: str) -> JudgeRequest[VerdictLabel]:
    prompt = SUBTASKS[subtask]
    return JudgeRequest(
        kind=subtask,
        prompt_version=prompt.version,
        messages=[{"role": "system", "content": prompt.instructions},
                  {"role": "user", "content": user}],
        response_format=_verdict_format(prompt.field),
        parse=functools.partial(parse_verdict, field=prompt.field),
        verdict_field=prompt.field,
    )


def _gold_lines(gold_answers: Sequence[str]) -> str:
    return "\n".join(f"- {text.strip()}" for text in gold_answers if text.strip())


def entailment_v2(*, passage: str, nugget: str) -> JudgeRequest[VerdictLabel]:
    return _request("entailment", f"PASSAGE:\n{passage.strip()}\n\nCLAIM:\n{nugget.strip()}")


def gold_v2(*, question: str, answer: str, gold_answers: Sequence[str]
            ) -> JudgeRequest[VerdictLabel]:
    return _request("gold", f"QUESTION:\n{question.strip()}\n\nGOLD ANSWER:\n"
                            f"{_gold_lines(gold_answers)}\n\nANSWER:\n{answer.strip()}")


def nuggets_v2(*, question: str, answer: str, nuggets: Sequence[str]
               ) -> JudgeRequest[VerdictLabel]:
    listed = "\n".join(f"- {text.strip()}" for text in nuggets) or "(none)"
    return _request("nuggets", f"QUESTION:\n{question.strip()}\n\nNUGGETS:\n{listed}"
                               f"\n\nANSWER:\n{answer.strip()}")


def relevance_v2(*, question: str, answer: str, nugget: str) -> JudgeRequest[VerdictLabel]:
    return _request("relevance", f"QUESTION:\n{question.strip()}\n\nANSWER:\n"
                                 f"{answer.strip()}\n\nNUGGET:\n{nugget.strip()}")


def explain_request(asked: JudgeRequest[VerdictLabel], verdict: bool
                    ) -> JudgeRequest[VerdictLabel]:
    """Ask for one sentence on why `asked` has the answer `verdict`, which is fixed."""
    field = SUBTASKS[asked.kind].field  # type: ignore[index]
    word = "true" if verdict else "false"
    messages: list[ChatMessage] = [
        asked.messages[0],
        {"role": "user", "content": asked.messages[1]["content"] + "\n\n"
                                    + EXPLAIN_INSTRUCTIONS.format(verdict=word)},
    ]
    return JudgeRequest(
        kind=asked.kind,
        prompt_version=f"{asked.prompt_version}+{EXPLAIN_VERSION}",
        messages=messages,
        response_format=response_format(f"r2c2_{field}_reason", {
            "type": "object",
            "properties": {field: {"type": "boolean", "enum": [verdict]},
                           "reason": {"type": "string", "maxLength": REASON_MAX_LENGTH}},
            "required": [field, "reason"],
            "additionalProperties": False,
        }),
        parse=functools.partial(parse_verdict, field=field, with_reason=True),
        # No verdict to weigh: the schema fixes it.
    )


def prompt_versions() -> dict[str, str]:
    """Every wording a v2 judgment depends on: what a judge validation is valid for."""
    return {"entailment": ENTAILMENT_V2, "answer": ANSWER_V2,
            **{name: prompt.decision for name, prompt in SUBTASKS.items()}}
