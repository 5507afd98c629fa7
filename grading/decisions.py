"""How one input is decided, step by step, by rules and yes/no calls to the judge, each
step recorded with its confidence (docs/judging.md, "How an input is judged")."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from campaign.vocabulary import RubricAnswerCheck
from grading.judge import (
    KEY_CHECK_UNPARSED,
    UNANSWERABLE_REASON,
    AnswerInput,
    EntailmentInput,
    JudgeOutcome,
    RubricInput,
)
from grading.llm.calls import JudgeCall
from grading.llm.client import JudgeClient
from grading.llm.inputs import JudgeRequest
from grading.llm.parsing import VerdictLabel
from grading.llm.rubric import (
    RubricGrade,
    answer_key_request,
    answer_matches_key,
    rubric_request,
    settled_grade,
)
from grading.llm.subtasks import (
    SUBTASKS,
    entailment_v2,
    explain_request,
    gold_v2,
    nuggets_v2,
    relevance_v2,
)
from grading.r2c2.entailment_rule import RULE_PRECISION, RULE_VERSION, unsupported
from grading.r2c2.gold_match import GoldVerdict, gold_verdict
from grading.validation.calibration import (
    JudgeCalibration,
    judgment_confidence,
    step_confidence,
)


@dataclass
class Steps:
    """The steps of one judgment as they are taken, and what they add up to."""

    records: list[dict[str, Any]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency: float = 0.0
    attempts: int = 0
    unparsed: str = ""  # the error of a step whose reply never parsed
    calibration: JudgeCalibration | None = None

    def add(self, record: dict[str, Any]) -> None:
        """Record a step with its calibrated confidence (a rule's is its own)."""
        record["calibrated"] = step_confidence(self.calibration, record)
        self.records.append(record)

    def rule(self, step: str, verdict: GoldVerdict) -> None:
        self.add({"step": step, "decided_by": f"rule:{verdict.rule}",
                  "verdict": verdict.correct, "confidence": 1.0, "matched": verdict.matched})

    def call(self, step: str, call: JudgeCall[Any], **extra: Any) -> bool | None:
        """Record a call; its verdict, or None when its reply never parsed. A logprob probability is
        first shifted to the subtask's `true_above` (docs/judging.md, "How an input is judged")."""
        verdict = call.label.verdict if isinstance(call.label, VerdictLabel) else None
        confidence, p_true = call.confidence, None
        # The thresholds were measured on token probabilities: a share of agreeing
        # samples (a server without logprobs) is too coarse to move, and is kept as is.
        if verdict is not None and confidence is not None \
                and call.confidence_from == "logprobs":
            p_true = confidence if verdict else 1 - confidence
            shifted = shift_to_threshold(p_true, SUBTASKS[step].true_above)  # type: ignore[index]
            verdict, confidence = shifted >= 0.5, max(shifted, 1 - shifted)
        self.add({"step": step, "decided_by": "llm", **extra,
                  "prompt_version": call.prompt_version,
                  "decision": SUBTASKS[step].decision,  # type: ignore[index]
                  "verdict": verdict, "confidence": confidence, "p_true": p_true,
                  "confidence_from": call.confidence_from})
        self.raw.append(f"{step}: {call.raw_output}" if len(self.records) > 1 or extra
                        else call.raw_output)
        self.add_cost(call)
        if call.needs_review:
            self.unparsed = call.error or "reply did not parse"
        return verdict

    def add_cost(self, call: JudgeCall[Any]) -> None:
        if call.prompt_tokens is not None:
            self.prompt_tokens = (self.prompt_tokens or 0) + call.prompt_tokens
        if call.completion_tokens is not None:
            self.completion_tokens = (self.completion_tokens or 0) + call.completion_tokens
        self.latency += call.latency
        self.attempts += call.attempts

    @property
    def confidence(self) -> float | None:
        known = [r["confidence"] for r in self.records if r["confidence"] is not None]
        return min(known) if len(known) == len(self.records) and known else None

    def outcome(self, label: dict[str, Any] | None, reason: str = "",
                nugget_reasons: dict[str, str] | None = None,
                confidence: float | Literal["steps"] | None = "steps") -> JudgeOutcome:
        """The judgment; its confidence is the least sure step's unless given."""
        if self.unparsed:
            label = None
        if confidence == "steps":
            calibrated = judgment_confidence(self.calibration, self.records)
        else:
            calibrated = self.records[-1].get("calibrated") if confidence is not None else None
        return JudgeOutcome(
            label=label, reason=reason, nugget_reasons=nugget_reasons or {},
            raw_output="\n".join(self.raw), prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens, latency_seconds=self.latency,
            attempts=self.attempts, needs_review=label is None, error=self.unparsed,
            confidence=None if label is None else
            self.confidence if confidence == "steps" else confidence,
            calibrated_confidence=None if label is None else calibrated,
            steps=self.records,
        )


def shift_to_threshold(p_true: float, true_above: float) -> float:
    """`p_true` with its log-odds moved so that `true_above` becomes the even point."""
    if true_above == 0.5:
        return p_true
    edge = 1e-9  # a probability of exactly 0 or 1 has infinite log-odds
    p_true = min(max(p_true, edge), 1 - edge)
    odds = math.log(p_true / (1 - p_true)) - math.log(true_above / (1 - true_above))
    return 1 / (1 + math.exp(-odds))


def _rule_reason(verdict: GoldVerdict, answer: str) -> str:
    if verdict.correct:
        return f"Matches the gold answer {verdict.matched!r} once normalised (rule)."
    if verdict.rule == "part-of-list":
        return f"Gives only part of the gold answer {verdict.matched!r} (rule)."
    return f"Gives the number {answer.strip()!r}, which differs from the gold answer (rule)."


@dataclass
class DecisionSession:
    """The subtask calls of one batch, on one client."""

    client: JudgeClient
    explain_below: float
    calibration: JudgeCalibration | None = None

    def steps(self) -> Steps:
        return Steps(calibration=self.calibration)

    async def _reason(self, request: JudgeRequest[VerdictLabel], call: JudgeCall[Any],
                      steps: Steps) -> str:
        """A written reason when the judge doubted its verdict, else ""."""
        label = call.label
        # A server that sends no logprobs leaves the doubt unmeasured: explaining every
        # verdict would double the calls, so only a measured doubt is explained. The
        # calibrated confidence is the one the review queue compares, where there is one.
        step = steps.records[-1]  # its confidence is after the subtask's threshold
        sure = step["confidence"] if step.get("calibrated") is None else step["calibrated"]
        doubtful = sure is not None and sure < self.explain_below
        if not isinstance(label, VerdictLabel) or not doubtful:
            return ""
        explained = await self.client.judge(explain_request(request, label.verdict))
        steps.add_cost(explained)
        steps.records[-1]["explained"] = True
        return explained.label.reason if isinstance(explained.label, VerdictLabel) else ""

    async def entailment(self, item: EntailmentInput) -> JudgeOutcome:
        steps = self.steps()
        missing = unsupported(item.passage, item.nugget)
        if missing:
            # Names or numbers the passage lacks: not entailed, and no call is needed.
            # The rule is as sure as it was right on labelled nuggets.
            steps.add({"step": "names-and-numbers", "decided_by": "rule:unsupported",
                       "rule_version": RULE_VERSION, "verdict": False,
                       "missing": missing, "confidence": RULE_PRECISION})
            return steps.outcome({"entailed": False},
                                 f"The passage does not mention {', '.join(missing)} (rule).")
        request = entailment_v2(passage=item.passage, nugget=item.nugget)
        call = await self.client.judge(request)
        entailed = steps.call("entailment", call)
        if entailed is None:
            return steps.outcome(None)
        return steps.outcome({"entailed": entailed}, await self._reason(request, call, steps))

    async def answer(self, item: AnswerInput) -> JudgeOutcome:
        steps = self.steps()
        reasons: list[str] = []
        correct: bool | None = True
        if item.answer_check in ("gold", "both"):
            correct = await self._against_gold(item, steps, reasons)
        if correct and item.answer_check in ("nuggets", "both"):
            request = nuggets_v2(question=item.question, answer=item.answer,
                                 nuggets=[text for _, text in item.nuggets])
            call = await self.client.judge(request)
            correct = steps.call("nuggets", call)
            reasons.append(await self._reason(request, call, steps))
        if correct is None:
            return steps.outcome(None)
        nugget_reasons: dict[str, str] = {}
        relevant: list[int] = []
        if correct and item.nuggets:
            relevant = await self._relevant(item, steps, nugget_reasons)
        label = {"correct": correct, "relevant": relevant}
        return steps.outcome(label, " ".join(r for r in reasons if r), nugget_reasons)

    async def _against_gold(self, item: AnswerInput, steps: Steps,
                            reasons: list[str]) -> bool | None:
        ruled = gold_verdict(item.answer, item.gold_answers)
        if ruled is not None:
            steps.rule("gold", ruled)
            reasons.append(_rule_reason(ruled, item.answer))
            return ruled.correct
        request = gold_v2(question=item.question, answer=item.answer,
                          gold_answers=item.gold_answers)
        call = await self.client.judge(request)
        verdict = steps.call("gold", call)
        reasons.append(await self._reason(request, call, steps))
        return verdict

    async def _relevant(self, item: AnswerInput, steps: Steps,
                        nugget_reasons: dict[str, str]) -> list[int]:
        requests = [(num, relevance_v2(question=item.question, answer=item.answer,
                                       nugget=text)) for num, text in item.nuggets]
        # One after another: all but the nugget is the same prompt, which the server
        # then computes once (see `shared_prefixes`).
        calls = [await self.client.judge(request) for _, request in requests]
        relevant = []
        for (num, request), call in zip(requests, calls, strict=True):
            if steps.call("relevance", call, nugget=num):
                relevant.append(num)
            reason = await self._reason(request, call, steps)
            if reason:
                nugget_reasons[str(num)] = reason
        return sorted(relevant)

    async def rubric(self, item: RubricInput) -> JudgeOutcome:
        """Self-rate the passage on the item; then check the answer against the key."""
        steps = self.steps()
        call = await self.client.judge(rubric_request(passage=item.passage, item=item.item,
                                                      target=item.target))
        rated = call.label if isinstance(call.label, RubricGrade) else None
        grade = settled_grade(rated)
        # The grade carries no probability: the client measures only true/false verdicts.
        steps.records.append({"step": "rubric", "decided_by": "llm",
                              "prompt_version": call.prompt_version,
                              "self_rated": grade.self_rated, "grade": grade.grade,
                              "unanswerable": grade.unanswerable, "confidence": None})
        steps.raw.append(call.raw_output)
        steps.add_cost(call)
        if grade.needs_review:
            # No label: the grade that counts is UNPARSED_GRADE until a person decides
            # (grading.selectors.counted_grade), and the judgment reads needs_review.
            steps.unparsed = call.error or "reply did not parse"
            return steps.outcome(None)
        label: dict[str, Any] = {"grade": grade.grade, "answer": grade.answer}
        reason = UNANSWERABLE_REASON if grade.unanswerable else ""
        confidence = None
        if item.answer_check != RubricAnswerCheck.NONE and item.answers:
            label["key_match"] = await self._key_match(item, grade, steps)
            if label["key_match"] is None:
                reason = KEY_CHECK_UNPARSED
            # The one part of the label the judge's probability is known for: a doubtful
            # key check is what brings the judgment to the review queue.
            confidence = steps.records[-1]["confidence"]
        return steps.outcome(label, reason, confidence=confidence)

    async def _key_match(self, item: RubricInput, grade: RubricGrade,
                         steps: Steps) -> bool | None:
        """EXAM++ answer verification; None where the judge's reply never parsed."""
        if grade.unanswerable:
            # Nothing was extracted: nothing can match, and no call is needed.
            steps.add({"step": "answer-key", "decided_by": "rule:unanswerable",
                       "verdict": False, "confidence": 1.0})
            return False
        if item.answer_check == RubricAnswerCheck.KEY:
            matched = answer_matches_key(grade.answer, item.answers)
            steps.add({"step": "answer-key", "decided_by": "rule:edit-distance",
                       "verdict": matched, "confidence": 1.0})
            return matched
        call = await self.client.judge(answer_key_request(
            question=item.item, answer=grade.answer, key_answers=item.answers))
        verdict = call.label.verdict if isinstance(call.label, VerdictLabel) else None
        steps.add({"step": "answer-key", "decided_by": "llm",
                   "prompt_version": call.prompt_version, "verdict": verdict,
                   "confidence": call.confidence, "confidence_from": call.confidence_from})
        steps.raw.append(f"answer-key: {call.raw_output}")
        steps.add_cost(call)
        return verdict
