"""Which judge grades, and how hard the client may push it (grading.setup)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from embedded_judge.records import SharedJudge
from grading import setup

SERVED = SharedJudge(model="qwen2.5-coder-0.5b", base_url="http://127.0.0.1:1/v1", slots=4,
                     pid=1, started_by=1)


@override_settings(GRADER_BASE_URL="", GRADER_CONCURRENCY=8)
def test_the_embedded_judge_gets_no_more_requests_than_it_has_slots(monkeypatch):
    monkeypatch.setattr(setup, "_embedded_server", lambda name=None: SERVED)

    config = setup.judge_config()

    assert (config.base_url, config.model, config.concurrency) == (
        "http://127.0.0.1:1/v1", "qwen2.5-coder-0.5b", 4)


@override_settings(GRADER_BASE_URL="")
def test_the_embedded_judge_s_client_asks_where_the_server_is_after_losing_it(monkeypatch):
    asked: list[str | None] = []

    def embedded_server(name: str | None = None) -> SharedJudge:
        asked.append(name)
        return SERVED if len(asked) == 1 else SharedJudge(
            model=SERVED.model, base_url="http://127.0.0.1:2/v1", slots=4, pid=2, started_by=2)

    monkeypatch.setattr(setup, "_embedded_server", embedded_server)
    config = setup.judge_config()

    assert config.relocate is not None and config.relocate() == "http://127.0.0.1:2/v1"
    assert asked == [None, "qwen2.5-coder-0.5b"]


@override_settings(GRADER_BASE_URL="", GRADER_CONCURRENCY=2)
def test_a_lower_concurrency_setting_still_holds_for_the_embedded_judge(monkeypatch):
    monkeypatch.setattr(setup, "_embedded_server", lambda name=None: SERVED)

    assert setup.judge_config().concurrency == 2


@override_settings(GRADER_BASE_URL="http://vllm:8000/v1", GRADER_MODEL="m",
                   GRADER_CONCURRENCY=32)
def test_a_served_judge_takes_the_concurrency_setting_as_it_is():
    config = setup.judge_config()

    assert (config.base_url, config.model, config.concurrency) == (
        "http://vllm:8000/v1", "m", 32)


@pytest.mark.parametrize("model", ["", "served-name"])
@override_settings(GRADER_BASE_URL="http://vllm:8000/v1")
def test_a_served_judge_without_a_model_name_asks_for_the_default(model, settings):
    settings.GRADER_MODEL = model

    assert setup.judge_config().model == (model or "default")
