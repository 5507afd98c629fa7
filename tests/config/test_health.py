"""`/healthz`'s deep checks: 200 when database, broker and storage work; 503 naming what
does not. Asked as a monitor with the health token (tests/security/test_health.py has who
gets what)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.test import Client
from pytest_django import Settings as SettingsWrapper

pytestmark = pytest.mark.django_db

TOKEN = "a-monitors-health-token"


@pytest.fixture(autouse=True)
def health_token(settings: SettingsWrapper) -> None:
    settings.HEALTH_TOKEN = TOKEN


def monitor() -> Client:
    return Client(headers={"X-Health-Token": TOKEN})


def test_it_answers_200_when_everything_works() -> None:
    response = monitor().get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "database": True, "broker": True, "storage": True,
    }


def test_it_answers_503_naming_the_broker_when_the_broker_is_unreachable(
    switch_broker: Callable[[str], None],
) -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused.
    switch_broker("redis://127.0.0.1:1/0")
    response = monitor().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["detail"] == "failing: broker"
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True


def test_it_answers_503_when_the_embedded_broker_folder_is_gone(
    switch_broker: Callable[[str], None], settings: SettingsWrapper, tmp_path: Path
) -> None:
    switch_broker("filesystem://")
    settings.CELERY_BROKER_DIR = tmp_path / "removed"
    response = monitor().get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"]["detail"] == (
        f"RuntimeError: broker folder {tmp_path / 'removed'} is missing or not writable"
    )


def test_it_answers_503_naming_the_storage_when_files_cannot_be_written(
    settings: SettingsWrapper, tmp_path: Path
) -> None:
    # The media "folder" is a plain file: no one, not even root, can write below it.
    not_a_folder = tmp_path / "media"
    not_a_folder.write_text("")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": str(not_a_folder)}},
    }
    response = monitor().get("/healthz")
    assert response.status_code == 503
    assert response.json()["detail"] == "failing: storage"


def test_it_says_so_when_no_worker_answers(
    settings: SettingsWrapper, switch_broker: Callable[[str], None]
) -> None:
    settings.HEALTH_CHECK_TIMEOUT = 0.5
    # An in-process broker of this test's own: no worker consumes from it.
    switch_broker("memory://")
    response = monitor().get("/healthz?worker=1")
    assert response.status_code == 503
    assert response.json()["checks"]["worker"]["detail"] == (
        "RuntimeError: no worker answered within 0.5 s"
    )


@pytest.mark.worker
def test_a_running_worker_answers_the_deep_check(
    celery_worker: object, settings: SettingsWrapper
) -> None:
    # Not the timeout under test: a worker on a busy machine still answers well within it.
    settings.HEALTH_CHECK_TIMEOUT = 60.0
    started = time.perf_counter()
    response = monitor().get("/healthz?worker=1")
    elapsed = time.perf_counter() - started
    assert response.status_code == 200
    worker = response.json()["checks"]["worker"]
    assert (worker["ok"], worker["detail"]) == (True, "pong")
    assert set(worker) == {"ok", "detail", "seconds"}
    # The round trip to the worker, in seconds: part of the request's own time.
    assert isinstance(worker["seconds"], float) and 0 < worker["seconds"] <= elapsed
