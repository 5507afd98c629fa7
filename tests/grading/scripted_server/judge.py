"""`ScriptedJudge`: a responder that answers the R2C2 judge's subtasks as a test says.

The tests say which nuggets are entailed, which answers are correct and which nuggets
are relevant to them, as a human would write a marked run. It tells the judge's subtasks
(grading/llm/subtasks.py) apart by their reply schema's name, finds the input they ask
about in the prompt's labelled sections (`ChatRequest.section`), answers with token
logprobs that give its verdict the scripted confidence once the subtask's threshold is
applied (`raw_probability`; `raw` scripts the token probability itself), and writes "scripted" when
asked for a reason. Faults (timeouts, 500s, 429s, malformed JSON, and the refusals of a
misconfigured judge: 401 for a bad API key, 404 for an unknown model) can be scripted
per input.

Nothing here waits on the clock: a scripted timeout is a `NoReply` (never answered while
the server runs) and held answers wait for a gate that `release_answers` opens.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections import Counter
from dataclasses import dataclass, field

from grading.llm.subtasks import SUBTASKS, Subtask
from tests.grading.scripted_server.replies import (
    ChatRequest,
    NoReply,
    Reply,
    Status,
    Step,
    bad_api_key,
    unknown_model,
    verdict_logprobs,
)
from tests.grading.scripted_server.rubric import RUBRIC_SCHEMAS, ScriptedRubric
from tests.grading.scripted_server.server import Traffic

Fault = str  # "timeout", "500", "429", "garbage", "401", "404"

#: The judge's probability for a verdict where a test scripts none: above any threshold.
SURE = 0.99

#: The gate the answer requests wait for while `hold_answers` is set.
ANSWERS_GATE = "answers"


@dataclass(kw_only=True)
class ScriptedJudge(Traffic):
    """What the judge says. Keys are nugget texts (entailment) and answer texts (answers).

    `relevant` maps an answer to the texts of the nuggets relevant to it. `sure` maps a
    key (nugget or answer text) to the judge's probability for its verdict there;
    elsewhere it is SURE. A relevance call's key, for calls, faults and `sure`, is
    "relevance:" and the nugget text; a call for a reason's is "explain:" and its key.
    The server's counts (`hold_until`, `max_in_flight`) are kept here too (`Traffic`),
    so a test sets and reads them on the judge it scripted.
    """

    entailed: dict[str, bool] = field(default_factory=dict)
    correct: dict[str, bool] = field(default_factory=dict)
    relevant: dict[str, list[str]] = field(default_factory=dict)
    sure: dict[str, float] = field(default_factory=dict)
    # key -> the token probability of the verdict as sent, before any threshold (for the
    # tests of the threshold itself); it overrides `sure`.
    raw: dict[str, float] = field(default_factory=dict)
    # key -> faults to serve, one per request, before answering. A "timeout" is never
    # answered while the server runs, so the client's timeout fires.
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    # While set, answer requests wait (after setting `answer_arrived`) until
    # `release_answers()`: the entailment step is over and the answer step under way.
    hold_answers: bool = False
    answer_arrived: threading.Event = field(default_factory=threading.Event)
    # False: a server that sends no token logprobs (the client then samples to measure
    # doubt). `sampled` maps a key to the verdicts of its sampled replies (temperature
    # > 0), served in order; elsewhere a sampled reply repeats the verdict.
    logprobs: bool = True
    sampled: dict[str, list[bool]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    # Answers the RUBRIC prompts (self-ratings, answer checks, test-bank drafts), so the
    # session's judge (the worker's) grades both kinds of campaign.
    rubric: ScriptedRubric = field(default_factory=ScriptedRubric)

    def release_answers(self) -> None:
        """Let held answer requests (and later ones) through."""
        with self.lock:
            self.hold_answers = False
            self.release(ANSWERS_GATE)

    def __call__(self, request: ChatRequest) -> Step:
        if request.schema_name in RUBRIC_SCHEMAS:
            return self.rubric(request)
        name = request.schema_name.removeprefix("r2c2_")
        explaining = name.endswith("_reason")
        verdict_field = name.removesuffix("_reason")
        if verdict_field == "entailed":
            key = request.section("CLAIM")
            verdict = self.entailed.get(key, True)
        elif verdict_field == "correct":
            key = request.section("ANSWER")
            verdict = self.correct.get(key, False)
        else:
            nugget = request.section("NUGGET")
            key = f"relevance:{nugget}"
            verdict = nugget in self.relevant.get(request.section("ANSWER"), [])
        with self.lock:
            pending_samples = self.sampled.get(key)
            if request.temperature > 0 and not explaining and pending_samples:
                verdict = pending_samples.pop(0)
            if explaining:
                key = f"explain:{key}"
            self.calls[key] += 1
            pending = self.faults.get(key)
            fault = pending.pop(0) if pending else None
            gate = None
            if verdict_field == "correct" and self.hold_answers:
                # A new hold: the gate of an earlier one is closed again.
                self.released.discard(ANSWERS_GATE)
                self.answer_arrived.set()
                gate = ANSWERS_GATE
        if fault is not None:
            return _fault_step(fault, request, gate)
        if explaining:
            fixed = request.schema["properties"][verdict_field]["enum"][0]
            return Reply(json.dumps({verdict_field: fixed, "reason": "scripted"}), after=gate)
        logprobs = None
        if request.logprobs and self.logprobs:
            subtask: Subtask = {"entailed": "entailment", "relevant": "relevance"}.get(
                verdict_field, "gold" if "GOLD ANSWER:" in request.user else "nuggets")  # type: ignore[assignment]
            probability = self.raw.get(key) or raw_probability(
                verdict, self.sure.get(key, SURE), SUBTASKS[subtask].true_above)
            logprobs = verdict_logprobs(verdict, probability)
        return Reply(json.dumps(verdict), logprobs=logprobs, after=gate)


def raw_probability(verdict: bool, confidence: float, true_above: float) -> float:
    """The token probability of `verdict` that the judge turns into `confidence` under a
    subtask's threshold: it moves the log-odds of "true" by the threshold's."""
    edge = 1e-9
    shifted_true = min(max(confidence if verdict else 1 - confidence, edge), 1 - edge)
    log_odds = math.log(shifted_true / (1 - shifted_true)) + math.log(
        true_above / (1 - true_above))
    p_true = 1 / (1 + math.exp(-log_odds))
    return p_true if verdict else 1 - p_true


def _fault_step(fault: Fault, request: ChatRequest, gate: str | None) -> Step:
    if fault == "timeout":
        return NoReply()
    steps: dict[str, Reply | Status] = {
        "500": Status(500, "scripted failure"),
        "429": Status(429, "slow down"),
        "401": bad_api_key(),
        "404": unknown_model(request.model),
        "garbage": Reply("this is not JSON {"),
    }
    return dataclasses.replace(steps[fault], after=gate)
