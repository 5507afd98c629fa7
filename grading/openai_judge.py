"""The judge that speaks the OpenAI chat protocol (vLLM, the embedded llama.cpp server):
batches of inputs on one client in a thread of its own, inputs that share a prompt start
judged one after another (docs/judging.md)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from grading.decisions import DecisionSession
from grading.judge import (
    EntailmentInput,
    JudgeIdentity,
    JudgeInput,
    JudgeOutcome,
    JudgeSession,
    Outcomes,
    RubricInput,
)
from grading.llm.calls import JudgeCall, JudgeConfig, JudgeError
from grading.llm.client import JudgeClient
from grading.llm.inputs import JudgeRequest, Label
from grading.llm.loop import LoopThread
from grading.validation.calibration import (
    JudgeCalibration,
)


def shared_prefixes(inputs: Sequence[JudgeInput]) -> list[list[int]]:
    """The inputs' positions in groups whose prompts start alike (entailments citing one passage,
    rubric inputs rating one): judged one after another, a group reuses the server's cached
    prompt (docs/judging.md, "Calls that share a prompt start go one after another")."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for position, item in enumerate(inputs):
        if isinstance(item, EntailmentInput):
            key: tuple[str, ...] = ("entailment", item.passage)
        elif isinstance(item, RubricInput):
            key = ("rubric", str(item.target), item.passage)
        else:
            key = ("answer", str(position))
        groups.setdefault(key, []).append(position)
    return list(groups.values())


class OpenAIJudge:
    """A judge behind an OpenAI-compatible chat-completions server."""

    def __init__(self, config: JudgeConfig, calibration: JudgeCalibration | None = None
                 ) -> None:
        self.config = config
        # Maps the judge's raw confidences to people's agreement (grading.validation).
        self.calibration = calibration
        self.identity = JudgeIdentity(model=config.model, decoding=config.decoding)
        self.errors: list[str] = []

    def judge_many(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> list[JudgeOutcome | JudgeError]:
        async def judge() -> Outcomes:
            # One client for this batch: its HTTP pool belongs to this event loop.
            async with JudgeClient(self.config) as client:
                return await self._judged(client, inputs, on_judged, explain_below)

        return asyncio.run(judge())

    @contextlib.contextmanager
    def session(self) -> Iterator[JudgeSession]:
        """Batches on one client, on an event loop in a thread of its own."""
        loop = LoopThread(f"judge-{self.identity.model}")
        loop.start()
        client = JudgeClient(self.config)
        try:
            yield _Batches(self, loop, client)
        finally:
            loop.close(client.aclose())

    async def _judged(
        self, client: JudgeClient, inputs: Sequence[JudgeInput],
        on_judged: Callable[[], None] | None, explain_below: float,
    ) -> Outcomes:
        session = DecisionSession(client, explain_below, self.calibration)

        async def one(item: JudgeInput) -> JudgeOutcome | JudgeError:
            try:
                if isinstance(item, EntailmentInput):
                    return await session.entailment(item)
                if isinstance(item, RubricInput):
                    return await session.rubric(item)
                return await session.answer(item)
            except JudgeError as error:
                self.errors.append(str(error))
                return error
            finally:
                if on_judged is not None:
                    on_judged()

        outcomes: dict[int, JudgeOutcome | JudgeError] = {}

        async def in_turn(positions: list[int]) -> None:
            for position in positions:
                outcomes[position] = await one(inputs[position])

        await asyncio.gather(*(in_turn(group) for group in shared_prefixes(inputs)))
        return [outcomes[position] for position in range(len(inputs))]

    def ask_many(
        self, requests: Sequence[JudgeRequest[Label]]
    ) -> list[JudgeCall[Label] | JudgeError]:
        """Send requests that are not judgments (a test bank to draft), concurrently;
        each call's record, or the JudgeError of a call that failed, in order."""

        async def ask() -> list[JudgeCall[Label] | JudgeError]:
            async with JudgeClient(self.config) as client:
                return await client.judge_all(requests)

        return asyncio.run(ask())


@dataclass(frozen=True)
class _Batches:
    """`OpenAIJudge.session`'s batches: coroutines on its loop, on its one client."""

    judge: OpenAIJudge
    loop: LoopThread
    client: JudgeClient

    def submit(
        self, inputs: Sequence[JudgeInput], *, on_judged: Callable[[], None] | None = None,
        explain_below: float = 0.0,
    ) -> Future[Outcomes]:
        return self.loop.submit(self.judge._judged(self.client, list(inputs), on_judged,
                                                   explain_below))
