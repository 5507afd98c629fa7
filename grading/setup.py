"""Which judge grades: the server at GRADER_BASE_URL (vLLM or any OpenAI-compatible one), else
the machine's shared embedded llama.cpp judge (docs/judging.md, "One judge per machine")."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from campaign.kinds import kinds
from campaign.models import Campaign, Track
from embedded_judge.models import ModelInstallError
from embedded_judge.shared import SharedJudge, shared_judge
from grading.llm.calls import JudgeConfig
from grading.openai_judge import OpenAIJudge
from grading.validation.services import judge_calibration

logger = logging.getLogger(__name__)


def _embedded_server(name: str | None = None) -> SharedJudge:
    """The machine's embedded judge serving the packaged model `name`
    (GRADER_LOCAL_MODEL unless given), started here if none is running."""
    return shared_judge(name or settings.GRADER_LOCAL_MODEL, var_dir=Path(settings.VAR_DIR),
                        idle_seconds=settings.GRADER_LOCAL_IDLE_SECONDS,
                        engine=settings.GRADER_LOCAL_ENGINE)


def _embedded_base_url(name: str) -> str:
    """Where the embedded judge `name` serves now (`JudgeConfig.relocate`)."""
    return _embedded_server(name).base_url


def worker_judge_start() -> None:
    """In a Celery worker's main process, before it forks: find or start the embedded judge when
    it is the official one; one that cannot start is logged (docs/operations.md)."""
    if settings.GRADER_BASE_URL:
        return
    try:
        _embedded_server()
    except (ModelInstallError, RuntimeError, OSError):
        logger.exception("the embedded judge did not start with the worker")


def judge_config() -> JudgeConfig:
    if settings.GRADER_BASE_URL:
        return _config(settings.GRADER_BASE_URL, settings.GRADER_MODEL or "default")
    return _embedded_config()


def _embedded_config(name: str | None = None) -> JudgeConfig:
    judge = _embedded_server(name)
    # No more requests in flight than the server decodes at once: more would only wait
    # in its queue, and each would keep a connection open meanwhile.
    return _config(judge.base_url, judge.model,
                   concurrency=min(settings.GRADER_CONCURRENCY, judge.slots),
                   relocate=functools.partial(_embedded_base_url, judge.model))


def _config(base_url: str, model: str, concurrency: int | None = None,
            relocate: Callable[[], str] | None = None) -> JudgeConfig:
    """A judge at `base_url` serving `model`, with the GRADER_* key, concurrency, timeout."""
    return JudgeConfig(
        base_url=base_url, model=model, api_key=settings.GRADER_API_KEY,
        concurrency=concurrency or settings.GRADER_CONCURRENCY, timeout=settings.GRADER_TIMEOUT,
        doubt_samples=settings.GRADER_DOUBT_SAMPLES, relocate=relocate,
    )


def official_model_name() -> str:
    """The model the official judge serves, without starting it (the embedded server
    serves a packaged model under its own name)."""
    if settings.GRADER_BASE_URL:
        return settings.GRADER_MODEL or "default"
    return str(settings.GRADER_LOCAL_MODEL)


def _judge(config: JudgeConfig, campaign: Campaign | None) -> OpenAIJudge:
    """A judge with the calibration of its model for `campaign` (grading.validation)."""
    return OpenAIJudge(config, calibration=judge_calibration(campaign=campaign,
                                                             judge_model=config.model))


def official_judge(campaign: Campaign | None = None) -> OpenAIJudge:
    return _judge(judge_config(), campaign)


def second_judge(track: Track) -> OpenAIJudge | None:
    """The track's second judge (agreement only), if one is configured."""
    if not (track.second_judge_base_url and track.second_judge_model):
        return None
    return _judge(_config(track.second_judge_base_url, track.second_judge_model),
                  track.campaign)


UNKNOWN_JUDGE = "no judge {name!r}: expected official, second, or a packaged model ({models})"
NO_SECOND_JUDGE = "campaign {slug} has no AC track with a second judge"


class UnknownJudge(ValueError):
    """`judge_named` was given a name it does not know; the message lists the choices."""


def judge_named(campaign: Campaign, name: str) -> OpenAIJudge:
    """The judge `name` stands for: "official" (the one that grades), "second" (the
    first AC track's second judge), or a packaged model run by the embedded server."""
    from embedded_judge.models import MODELS

    if name == "official":
        return official_judge(campaign)
    if name == "second":
        for track in campaign.tracks.filter(kind__in=kinds(second_judge=True)).order_by("slug"):
            judge = second_judge(track)
            if judge is not None:
                return judge
        raise UnknownJudge(NO_SECOND_JUDGE.format(slug=campaign.slug))
    if name in MODELS:
        return _judge(_embedded_config(name), campaign)
    raise UnknownJudge(UNKNOWN_JUDGE.format(name=name, models=", ".join(sorted(MODELS))))
