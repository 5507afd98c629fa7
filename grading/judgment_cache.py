"""The judgment cache: each distinct judge input judged once per campaign, judge and prompt.

Both grading paths use it: the R2C2 pipeline over an AC run (grading.services) and the
RUBRIC self-ratings of passages on test-bank items (grading.rubric_services). The cache
is held by Judgment's unique constraint, not by a lookup: two workers judging the same
input store one judgment.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from grading.judge import Judge, JudgeInput, JudgeOutcome, JudgeUnavailable
from grading.llm.client import JudgeError
from grading.models import Judgment, JudgmentStatus

# SQLite allows ~1000 parameters per query; stay well under it everywhere.
QUERY_CHUNK = 500

JUDGE_CALLS_FAILED = "{failed} of {calls} {kind} judge call(s) failed; the first: {error}"


class GradingProgress(Protocol):
    """Hears how many judge calls grading a run needs, and each call as it ends.

    The `grade` command draws a progress bar with it; `planned` may be called again for
    the same kind once the number is known exactly (the answer calls are known only
    after entailment: a question waits while one of its nuggets needs review).
    """

    def planned(self, kind: str, calls: int) -> None: ...

    def judged(self) -> None: ...


class Unwatched:
    """Progress that nobody watches (the Celery task's)."""

    def planned(self, kind: str, calls: int) -> None:
        pass

    def judged(self) -> None:
        pass


def chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def ensure_judgments(
    campaign_id: int, kind: str, items: Sequence[JudgeInput], judge: Judge, batch: int,
    progress: GradingProgress, explain_below: float,
) -> tuple[list[Judgment], int]:
    """The judgment of each item, judging only inputs never judged before.

    Returns the judgments in item order and the number of judge calls made. New
    judgments are stored batch by batch, so progress shows while a run is graded and
    a worker that dies loses at most one batch of work.
    """
    if not items:
        progress.planned(kind, 0)
        return [], 0
    identity = judge.identity
    prompt_version = items[0].prompt_version
    hashes = [identity.input_hash(item) for item in items]
    known = _judgments_by_hash(campaign_id, kind, identity.model, prompt_version, set(hashes))
    todo: dict[str, JudgeInput] = {}
    for item, digest in zip(items, hashes, strict=True):
        if digest not in known and digest not in todo:
            todo[digest] = item
    calls = 0
    errors: list[JudgeError] = []
    pending = list(todo.items())
    progress.planned(kind, len(pending))
    for chunk in chunks(pending, batch):
        outcomes = judge.judge_many([item for _, item in chunk], on_judged=progress.judged,
                                    explain_below=explain_below)
        calls += len(chunk)
        done = [(key, o) for key, o in zip(chunk, outcomes, strict=True)
                if isinstance(o, JudgeOutcome)]
        errors += [o for o in outcomes if isinstance(o, JudgeError)]
        Judgment.objects.bulk_create(
            [
                Judgment(
                    campaign_id=campaign_id, kind=kind, judge_model=identity.model,
                    prompt_version=prompt_version,
                    input_hash=digest, input=item.as_json(),
                    status=JudgmentStatus.NEEDS_REVIEW if o.needs_review else JudgmentStatus.DONE,
                    llm_label=o.label, llm_reason=o.reason, nugget_reasons=o.nugget_reasons,
                    raw_output=o.raw_output, decoding=identity.decoding.as_dict(),
                    prompt_tokens=o.prompt_tokens, completion_tokens=o.completion_tokens,
                    latency_seconds=o.latency_seconds, attempts=o.attempts,
                    confidence=o.confidence, steps=o.steps,
                )
                for (digest, item), o in done
            ],
            # Another worker may have judged the same input meanwhile: first one wins.
            ignore_conflicts=True,
        )
        if any(error.permanent for error in errors):
            break  # the server refused: the next batches would be refused alike
    if errors:
        # What succeeded is stored; the run is retried later and judges only the rest.
        # A refusal (bad API key, unknown model) is the reason to give, where there is one.
        permanent = [error for error in errors if error.permanent]
        raise JudgeUnavailable(
            JUDGE_CALLS_FAILED.format(failed=len(errors), calls=calls, kind=kind,
                                      error=(permanent or errors)[0]),
            permanent=bool(permanent))
    known.update(_judgments_by_hash(campaign_id, kind, identity.model, prompt_version, set(todo)))
    return [known[digest] for digest in hashes], calls


def _judgments_by_hash(
    campaign_id: int, kind: str, model: str, prompt_version: str, hashes: set[str]
) -> dict[str, Judgment]:
    found: dict[str, Judgment] = {}
    for chunk in chunks(sorted(hashes), QUERY_CHUNK):
        for judgment in Judgment.objects.filter(
            campaign_id=campaign_id, kind=kind, judge_model=model,
            prompt_version=prompt_version, input_hash__in=chunk,
        ):
            found[judgment.input_hash] = judgment
    return found
