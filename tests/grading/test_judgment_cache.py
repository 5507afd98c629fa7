"""The judgment cache's batches: small first ones, judgments read back batch by batch,
the garbage collector kept quiet meanwhile."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from grading.judge import EntailmentInput, JudgeSession
from grading.judgment_cache import FIRST_BATCH, Unwatched, ensure_judgments, ramped
from grading.llm.loop import QUIET_YOUNG_GENERATION, quiet_collector
from grading.models import Judgment, JudgmentKind
from grading.openai_judge import OpenAIJudge
from tests.grading.scripted_server import ScriptedJudge
from tests.support import Personas

PASSAGE = "The Long March 3B rocket launched Chang'e 4 from Xichang on 7 December 2018."


def test_batches_start_small_and_double_up_to_the_batch_size() -> None:
    items = list(range(1000))
    parts = list(ramped(items, 300))
    assert [len(part) for part in parts] == [FIRST_BATCH, 128, 256, 300, 252]
    assert [item for part in parts for item in part] == items
    assert [len(part) for part in ramped(items[:10], 4)] == [4, 4, 2]  # never above the size
    assert list(ramped([], 300)) == []


class _SizedBatches:
    """A judge's session that records the size of each batch sent to it."""

    def __init__(self, judge: OpenAIJudge, sizes: list[int]) -> None:
        self.identity = judge.identity
        self._judge, self._sizes = judge, sizes

    @contextlib.contextmanager
    def session(self) -> Iterator[_SizedBatches]:
        with self._judge.session() as inner:
            self._inner: JudgeSession = inner
            yield self

    def submit(self, inputs: Any, **options: Any) -> Future[Any]:
        self._sizes.append(len(inputs))
        return self._inner.submit(inputs, **options)


@pytest.mark.django_db
def test_the_first_calls_go_out_after_a_small_batch_and_every_item_gets_its_judgment(
    personas: Personas, judge: OpenAIJudge, script: ScriptedJudge,
) -> None:
    # Distinct claims whose names and numbers are all in the passage (a claim naming
    # others is refused before the judge sees it: grading.r2c2.entailment_rule).
    nuggets = [f"The rocket launched Chang'e 4 from Xichang{' again' * n}." for n in range(200)]
    script.entailed.update({nugget: n % 3 != 0 for n, nugget in enumerate(nuggets)})
    # Every nugget twice, the second time in a later batch: judged once, found both times.
    items = [EntailmentInput(passage=PASSAGE, nugget=nugget) for nugget in nuggets * 2]
    sizes: list[int] = []

    judgments, calls = ensure_judgments(
        personas.campaign.pk, JudgmentKind.ENTAILMENT, items,
        _SizedBatches(judge, sizes), 1024, Unwatched(), 0.0)  # type: ignore[arg-type]

    # 64 hashed and sent first, then 128; of the last 208 items only 8 are new.
    assert sizes == [FIRST_BATCH, 128, 8]
    assert calls == 200 == Judgment.objects.filter(kind=JudgmentKind.ENTAILMENT).count()
    assert [j.input["nugget"] for j in judgments] == nuggets * 2
    verdicts = [(j.label or {}).get("entailed") for j in judgments]
    assert verdicts == [n % 3 != 0 for n in range(200)] * 2
    assert [j.pk for j in judgments[:200]] == [j.pk for j in judgments[200:]]


def test_the_collector_is_quiet_while_the_judge_runs_and_as_it_was_afterwards() -> None:
    thresholds = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with quiet_collector():
        assert gc.get_freeze_count() > 0  # what existed at entry is left out of passes
        assert gc.get_threshold()[0] >= QUIET_YOUNG_GENERATION
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds
