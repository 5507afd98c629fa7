"""The judge's candidate wordings per subtask: each turns a labelled item into requests.

A variant's request asks one question and is answered with JSON booleans; the judge's
probability of "true" is read off the token logprobs where each boolean is chosen
(`probes.p_true_by_field`), so one short reply per question is enough and the rest of
a longer reply (a reason written after the verdict) cannot change it. The wordings of
the product (grading/llm) are imported, not copied: v1 and v2 are measured as shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from campaign.vocabulary import AnswerCheck
from grading.llm import prompts, subtasks
from grading.llm.schemas import answer_response_format, response_format
from grading.validation.labelled import AnswerItem, EntailmentItem

Payload = dict[str, Any]


@dataclass(frozen=True)
class Probe:
    """One request and the keys its booleans answer: (item id, nugget number or 0)."""

    keys: dict[str, tuple[str, int]]  # JSON field -> key
    payload: Payload


@dataclass(frozen=True)
class Variant:
    name: str
    subtask: str  # entailment, gold, nuggets, relevance
    probes: Callable[[Any], list[Probe]]
    note: str


def _boolean(name: str) -> Payload:
    return response_format(name, {"type": "boolean"})


def _object(name: str, fields: list[str], reason: bool = False) -> Payload:
    properties: dict[str, Any] = {f: {"type": "boolean"} for f in fields}
    if reason:
        properties["reason"] = {"type": "string", "maxLength": 200}
    return response_format(name, {"type": "object", "properties": properties,
                                  "required": list(properties),
                                  "additionalProperties": False})


def _chat(system: str, user: str, fmt: Payload, max_tokens: int) -> Payload:
    return {"messages": [{"role": "system", "content": system},
                         {"role": "user", "content": user}],
            "response_format": fmt, "max_tokens": max_tokens}


def _one(item: Any, field: str, payload: Payload, nugget: int = 0) -> list[Probe]:
    return [Probe({field: (item.id, nugget)}, payload)]


# --- entailment ---------------------------------------------------------------------------

def _claim(item: EntailmentItem) -> str:
    return f"PASSAGE:\n{item.passage.strip()}\n\nCLAIM:\n{item.nugget.strip()}"


CHECK_INSTRUCTIONS = """\
You check a CLAIM against a PASSAGE. Check each name, number, date and relation in the \
claim: is it in the passage, said of the same person or thing? Reply true only if the \
passage states the whole claim, possibly in other words or as a direct consequence. \
Reply false if any part is missing, changed, or said of someone else."""


def entailment_v1(item: EntailmentItem) -> list[Probe]:
    # v1 replied {"entailed": ..., "reason": ...}: the verdict comes first, so the
    # reason written after it is cut (8 tokens reach the verdict).
    fmt = _object("r2c2_entailment", ["entailed"], reason=True)
    return _one(item, "entailed", _chat(prompts.ENTAILMENT_INSTRUCTIONS, _claim(item), fmt, 8))


def entailment_v2(item: EntailmentItem) -> list[Probe]:
    request = subtasks.entailment_v2(passage=item.passage, nugget=item.nugget)
    return _one(item, "entailed", {"messages": request.messages,
                                   "response_format": request.response_format, "max_tokens": 2})


def entailment_v2_object(item: EntailmentItem) -> list[Probe]:
    fmt = _object("r2c2_entailment", ["entailed"])
    return _one(item, "entailed", _chat(subtasks.SUBTASKS["entailment"].instructions,
                                        _claim(item), fmt, 8))


def entailment_check(item: EntailmentItem) -> list[Probe]:
    fmt = _object("r2c2_entailment", ["entailed"])
    return _one(item, "entailed", _chat(CHECK_INSTRUCTIONS, _claim(item), fmt, 8))


# --- answers ------------------------------------------------------------------------------

def _answer_v1(check: str) -> Callable[[AnswerItem], list[Probe]]:
    def probes(item: AnswerItem) -> list[Probe]:
        messages = prompts.answer_messages(
            question=item.question, answer=item.answer, nuggets=dict(item.nuggets),
            answer_check=AnswerCheck(check), gold_answers=item.gold_answers)
        fmt = answer_response_format([num for num, _ in item.nuggets])
        # The whole reply: "correct" comes after a reason, and "relevant" is a list.
        return [Probe({"correct": (item.id, 0), "relevant": (item.id, -1)},
                      {"messages": messages, "response_format": fmt, "max_tokens": 400})]
    return probes


def gold_v2(item: AnswerItem) -> list[Probe]:
    request = subtasks.gold_v2(question=item.question, answer=item.answer,
                               gold_answers=item.gold_answers)
    return _one(item, "correct", {"messages": request.messages,
                                  "response_format": request.response_format, "max_tokens": 2})


def gold_v2_object(item: AnswerItem) -> list[Probe]:
    request = subtasks.gold_v2(question=item.question, answer=item.answer,
                               gold_answers=item.gold_answers)
    return _one(item, "correct", {"messages": request.messages, "max_tokens": 8,
                                  "response_format": _object("r2c2_correct", ["correct"])})


def nuggets_v2(item: AnswerItem) -> list[Probe]:
    request = subtasks.nuggets_v2(question=item.question, answer=item.answer,
                                  nuggets=[text for _, text in item.nuggets])
    return _one(item, "correct", {"messages": request.messages,
                                  "response_format": request.response_format, "max_tokens": 2})


NUGGETS_KNOWN = """\
You grade an ANSWER to a QUESTION. The NUGGETS are facts that may help; assume each is \
true, and use what you know as well. Reply true if the ANSWER gives the right answer to \
the QUESTION, in any words. Reply false if it gives a wrong person, thing or number, \
only part of what is asked, hedges between candidates, or gives no answer."""


def _nugget_lines(item: AnswerItem) -> str:
    return "\n".join(f"- {text.strip()}" for _, text in item.nuggets) or "(none)"


def nuggets_known(item: AnswerItem) -> list[Probe]:
    user = (f"QUESTION:\n{item.question.strip()}\n\nNUGGETS:\n{_nugget_lines(item)}"
            f"\n\nANSWER:\n{item.answer.strip()}")
    return _one(item, "correct", _chat(NUGGETS_KNOWN, user, _object("r2c2_correct",
                                                                    ["correct"]), 8))


def nuggets_v2_object(item: AnswerItem) -> list[Probe]:
    request = subtasks.nuggets_v2(question=item.question, answer=item.answer,
                                  nuggets=[text for _, text in item.nuggets])
    return _one(item, "correct", {"messages": request.messages, "max_tokens": 8,
                                  "response_format": _object("r2c2_correct", ["correct"])})


# --- relevance (asked of answers a person marked correct, as grading asks only then) ----

def relevance_v2(item: AnswerItem) -> list[Probe]:
    probes = []
    for num, text in item.nuggets:
        request = subtasks.relevance_v2(question=item.question, answer=item.answer,
                                        nugget=text)
        probes.append(Probe({"relevant": (item.id, num)},
                            {"messages": request.messages, "max_tokens": 2,
                             "response_format": request.response_format}))
    return probes


LISTED_INSTRUCTIONS = """\
An ANSWER to a QUESTION is correct. For each numbered NUGGET, reply true if it states a \
fact needed to reach that answer, false if the answer can be reached without it (a fact \
about something the question does not ask)."""


def relevance_listed(item: AnswerItem) -> list[Probe]:
    listed = "\n".join(f"[{num}] {text.strip()}" for num, text in item.nuggets)
    user = (f"QUESTION:\n{item.question.strip()}\n\nANSWER:\n{item.answer.strip()}"
            f"\n\nNUGGETS:\n{listed}")
    fields = [str(num) for num, _ in item.nuggets]
    return [Probe({str(num): (item.id, num) for num, _ in item.nuggets},
                  _chat(LISTED_INSTRUCTIONS, user, _object("r2c2_relevant", fields),
                        8 * len(fields) + 4))]


NEEDED_INSTRUCTIONS = """\
An ANSWER to a QUESTION is correct. Reply true if the NUGGET states a fact needed to \
reach that answer. Reply false if the answer can be reached without it: a fact about \
something the question does not ask."""


def relevance_needed(item: AnswerItem) -> list[Probe]:
    probes = []
    for num, text in item.nuggets:
        user = (f"QUESTION:\n{item.question.strip()}\n\nANSWER:\n{item.answer.strip()}"
                f"\n\nNUGGET:\n{text.strip()}")
        probes.append(Probe({"relevant": (item.id, num)},
                            _chat(NEEDED_INSTRUCTIONS, user, _boolean("r2c2_relevant"), 2)))
    return probes


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("entailment-v1", "entailment", entailment_v1, "v1 wording, verdict then reason"),
    Variant("entailment-v2", "entailment", entailment_v2, "v2 wording, bare boolean"),
    Variant("entailment-v2-object", "entailment", entailment_v2_object,
            'v2 wording, {"entailed": ...}'),
    Variant("entailment-check", "entailment", entailment_check,
            "each name, number, date and relation checked (MiniCheck-style)"),
    Variant("gold-v1", "gold", _answer_v1("gold"), "v1: one reply, reason first"),
    Variant("gold-v2", "gold", gold_v2, "v2 wording, bare boolean"),
    Variant("gold-v2-object", "gold", gold_v2_object, 'v2 wording, {"correct": ...}'),
    Variant("nuggets-v1", "nuggets", _answer_v1("nuggets"), "v1: one reply, reason first"),
    Variant("nuggets-v2", "nuggets", nuggets_v2, "v2 wording, bare boolean"),
    Variant("nuggets-v2-object", "nuggets", nuggets_v2_object, 'v2 wording, {"correct": ...}'),
    Variant("nuggets-known", "nuggets", nuggets_known, "nuggets and own knowledge, object"),
    Variant("relevance-v2", "relevance", relevance_v2, "v2: one call per nugget"),
    Variant("relevance-needed", "relevance", relevance_needed, "'needed', one call per nugget"),
    Variant("relevance-listed", "relevance", relevance_listed, "one call listing all nuggets"),
)}
