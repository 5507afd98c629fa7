"""The judgment cache: each distinct judge input judged once per campaign, judge and prompt, held
by Judgment's unique constraint (docs/judging.md, "Judging a run in batches")."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from django.conf import settings

from grading.judge import (
    Judge,
    JudgeIdentity,
    JudgeInput,
    JudgeOutcome,
    JudgeUnavailable,
    Outcomes,
)
from grading.llm.calls import JudgeError
from grading.llm.loop import quiet_collector
from grading.models import Judgment, JudgmentStatus

# SQLite allows ~1000 parameters per query; stay well under it everywhere.
QUERY_CHUNK = 500

JUDGE_CALLS_FAILED = "{failed} of {calls} {kind} judge call(s) failed; the first: {error}"


class GradingProgress(Protocol):
    """Hears how many judge calls grading a run needs, and each call as it ends (the `grade`
    command's bars); `planned` may come again for a kind once its number is known exactly."""

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


#: The first batch of judge inputs: the calls start once this many inputs are hashed and
#: looked up, not a whole batch's worth (at 16 slots, a 1,024-input batch took a quarter
#: of a second to prepare, with every slot idle); each next batch is twice as large, up
#: to the batch size asked for.
FIRST_BATCH = 64


def ramped(items: Sequence[Any], size: int, first: int = FIRST_BATCH) -> Iterable[Sequence[Any]]:
    """`items` in consecutive parts: `first` items, then twice as many, up to `size`."""
    start, part = 0, max(1, min(first, size))
    while start < len(items):
        yield items[start:start + part]
        start += part
        part = min(size, part * 2)


def ensure_judgments(
    campaign_id: int, kind: str, items: Sequence[JudgeInput], judge: Judge, batch: int,
    progress: GradingProgress, explain_below: float, *, prefetch: int | None = None,
    check: Callable[[], None] | None = None, meanwhile: Callable[[], None] | None = None,
) -> tuple[list[Judgment], int]:
    """The judgment of each item, in item order, and the judge calls made: only inputs never judged
    are sent, in batches kept in flight while earlier ones are stored; `check` before each batch,
    `meanwhile` once beside the first (docs/judging.md, "Judging a run in batches")."""
    pending_work = [meanwhile] if meanwhile is not None else []
    if not items:
        progress.planned(kind, 0)
        for work in pending_work:
            work()
        return [], 0
    identity = judge.identity
    prompt_version = items[0].prompt_version
    progress.planned(kind, len(items))  # at most; the exact number once all are hashed
    hashes: list[str] = []
    known: dict[str, Judgment] = {}
    todo: dict[str, JudgeInput] = {}
    ahead = settings.GRADING_PREFETCH if prefetch is None else prefetch
    store = _Store(campaign_id, kind, identity, prompt_version)
    in_flight: deque[tuple[Sequence[tuple[str, JudgeInput]], Future[Outcomes]]] = deque()
    with quiet_collector(), judge.session() as session:
        for part in ramped(items, batch):
            if check is not None:
                check()
            digests = [identity.input_hash(item) for item in part]
            hashes += digests
            known.update(_judgments_by_hash(campaign_id, kind, identity.model,
                                            prompt_version, set(digests) - set(todo)))
            new = []
            for item, digest in zip(part, digests, strict=True):
                if digest not in known and digest not in todo:
                    todo[digest] = item
                    new.append((digest, item))
            if new:
                in_flight.append((new, session.submit(
                    [item for _, item in new], on_judged=progress.judged,
                    explain_below=explain_below)))
            while pending_work and in_flight:
                pending_work.pop()()
            # The oldest batch is stored while the newer ones are judged.
            while len(in_flight) > ahead and not store.refused:
                store.batch(*in_flight.popleft())
            if store.refused:
                break  # the server refused: the next batches would be refused alike
        progress.planned(kind, len(todo))
        while pending_work:
            pending_work.pop()()
        while in_flight and not store.refused:
            store.batch(*in_flight.popleft())
    # Leaving the session cancelled what a refusal left in flight: those were not made.
    errors = store.errors
    if errors:
        # What succeeded is stored; the run is retried later and judges only the rest.
        # A refusal (bad API key, unknown model) is the reason to give, where there is one.
        permanent = [error for error in errors if error.permanent]
        raise JudgeUnavailable(
            JUDGE_CALLS_FAILED.format(failed=len(errors), calls=store.calls, kind=kind,
                                      error=(permanent or errors)[0]),
            permanent=bool(permanent))
    known.update(store.stored)
    return [known[digest] for digest in hashes], store.calls


class _Store:
    """Stores the outcomes of batches as they are waited for, counting calls and errors, and reads
    each batch's judgments back: another worker may have stored the same input first."""

    def __init__(self, campaign_id: int, kind: str, identity: JudgeIdentity,
                 prompt_version: str) -> None:
        self.campaign_id, self.kind = campaign_id, kind
        self.identity, self.prompt_version = identity, prompt_version
        self.calls = 0
        self.errors: list[JudgeError] = []
        self.stored: dict[str, Judgment] = {}

    @property
    def refused(self) -> bool:
        return any(error.permanent for error in self.errors)

    def batch(self, chunk: Sequence[tuple[str, JudgeInput]], judged: Future[Outcomes]) -> None:
        outcomes = judged.result()
        self.calls += len(chunk)
        done = [(key, o) for key, o in zip(chunk, outcomes, strict=True)
                if isinstance(o, JudgeOutcome)]
        self.errors += [o for o in outcomes if isinstance(o, JudgeError)]
        identity = self.identity
        Judgment.objects.bulk_create(
            [
                Judgment(
                    campaign_id=self.campaign_id, kind=self.kind, judge_model=identity.model,
                    prompt_version=self.prompt_version,
                    input_hash=digest, input=item.as_json(),
                    status=JudgmentStatus.NEEDS_REVIEW if o.needs_review else JudgmentStatus.DONE,
                    llm_label=o.label, llm_reason=o.reason, nugget_reasons=o.nugget_reasons,
                    raw_output=o.raw_output, decoding=identity.decoding.as_dict(),
                    prompt_tokens=o.prompt_tokens, completion_tokens=o.completion_tokens,
                    latency_seconds=o.latency_seconds, attempts=o.attempts,
                    confidence=o.confidence, calibrated_confidence=o.calibrated_confidence,
                    steps=o.steps,
                )
                for (digest, item), o in done
            ],
            # Another worker may have judged the same input meanwhile: first one wins.
            ignore_conflicts=True,
        )
        self.stored.update(_judgments_by_hash(
            self.campaign_id, self.kind, identity.model, self.prompt_version,
            {digest for (digest, _), _ in done}))


def _judgments_by_hash(
    campaign_id: int, kind: str, model: str, prompt_version: str, hashes: set[str]
) -> dict[str, Judgment]:
    found: dict[str, Judgment] = {}
    # What linking needs, the id and the labels: the inputs, raw outputs and steps of a
    # large run's judgments cost more to read than the rest of its grading.
    needed = ("id", "input_hash", "llm_label", "edited_label")
    for chunk in chunks(sorted(hashes), QUERY_CHUNK):
        for judgment in Judgment.objects.filter(
            campaign_id=campaign_id, kind=kind, judge_model=model,
            prompt_version=prompt_version, input_hash__in=chunk,
        ).only(*needed):
            found[judgment.input_hash] = judgment
    return found
