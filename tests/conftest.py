"""Shared fixtures: personas of a campaign, API clients, and a real Celery worker."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings as SettingsWrapper

from campaign.models import Track
from tests.factories import (
    CampaignFactory,
    QuestionFactory,
    TeamFactory,
    TrackFactory,
    UserFactory,
    make_member,
)
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import Personas, Upload, start_worker

# Fixtures shared by the grading and scoring tests.
pytest_plugins = ["tests.grading.fixtures"]
# Before any test module imports it (grading's tests do too): the scoring helpers' plain
# asserts explain their failures.
pytest.register_assert_rewrite("tests.scoring.support")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests last: slowest, and Playwright's event loop is best kept apart."""
    items.sort(key=lambda item: "tests/e2e/" in item.nodeid.replace("\\", "/"))


@pytest.fixture
def personas(db: None) -> Personas:
    campaign = CampaignFactory.create(slug="toy")
    for qid in ("D001", "D002", "D003"):
        QuestionFactory.create(campaign=campaign, qid=qid)
    team_a = TeamFactory.create(campaign=campaign, name="WASEDA")
    team_b = TeamFactory.create(campaign=campaign, name="KYOTO")
    return Personas(
        campaign=campaign,
        organiser=make_member(campaign, "olga").user,
        participant_a=make_member(campaign, "alice", team_a).user,
        participant_b=make_member(campaign, "bob", team_b).user,
        outsider=UserFactory.create(username="oscar"),
    )


@pytest.fixture(autouse=True)
def media_in_tmp(settings: SettingsWrapper, tmp_path: Path) -> Path:
    """Files written by a test (runs, health probes) go to its own folder."""
    media = tmp_path / "media"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": str(media)}},
    }
    return media


@pytest.fixture
def tracks(personas: Personas) -> dict[str, Track]:
    return {
        "pr": TrackFactory.create(campaign=personas.campaign, slug="pr", kind="pr"),
        "ac": TrackFactory.create(campaign=personas.campaign, slug="ac", kind="ac"),
    }


@pytest.fixture
def upload(personas: Personas, tracks: dict[str, Track]) -> Upload:
    """POST a run through the API as a persona."""

    def post(
        who: str, name: str, content: bytes, track: str | None = None, description: str = ""
    ) -> Any:
        track = track or ("ac" if "-AC-" in name else "pr")
        return personas.client(who).post(
            f"/api/v1/campaigns/{personas.campaign.slug}/runs/",
            {
                "track": track,
                "name": name,
                "description": description,
                "file": SimpleUploadedFile(name, content),
            },
            format="multipart",
        )

    return post


@pytest.fixture(scope="session")
def session_judge() -> Iterator[ScriptedServer]:
    """A scripted judge server for the whole session; tests set what it says."""
    with ScriptedServer(ScriptedJudge()) as server:
        yield server


def _test_database_url() -> str:
    """The URL of the test database pytest-django created, for another process."""
    from django.db import connection

    name = connection.settings_dict["NAME"]
    if connection.vendor == "sqlite":
        return f"sqlite:///{name}"
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    return f"{base}/{name}"


@pytest.fixture(scope="session")
def worker_env(
    django_db_setup: None, django_db_blocker: Any, session_judge: ScriptedServer
) -> dict[str, str]:
    """The environment of a worker that uses the test database and the scripted judge."""
    with django_db_blocker.unblock():
        database_url = _test_database_url()
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url, "GRADER_BASE_URL": session_judge.base_url,
            "GRADER_MODEL": "scripted-judge", "GRADER_TIMEOUT": "60"}


@pytest.fixture(scope="session")
def celery_worker(worker_env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process on the configured broker (filesystem or Redis).

    It uses the test database and grades with the session's scripted judge. Started
    once per session; ready when it has answered a ping task.
    """
    from config.celery import ping

    worker = start_worker(worker_env)
    try:
        assert ping.delay().get(timeout=120) == "pong"
        yield worker
    finally:
        worker.terminate()
        worker.wait(timeout=30)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: SettingsWrapper) -> None:
    # PBKDF2's deliberate slowness is a feature in production and a cost in tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    """Each test starts with an empty cache: throttle counts (and cached figures) never
    leak from one test into the next."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def switch_broker(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Point the Celery app at another broker URL for one test, then back.

    Celery caches its connection and producer pools on first use, so the URL alone
    is not enough: the pools are dropped on the way in and on the way out.
    """
    from config.celery import app

    def drop_pools() -> None:
        app._pool = None  # type: ignore[attr-defined]
        app.amqp._producer_pool = None  # type: ignore[attr-defined]

    def switch(url: str) -> None:
        drop_pools()
        monkeypatch.setattr(app.conf, "broker_url", url)
        # Celery reads this variable before its own settings.
        monkeypatch.setenv("CELERY_BROKER_URL", url)

    yield switch
    drop_pools()
