"""Shared fixtures: personas of a campaign, API clients, and a real Celery worker."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth.models import AbstractBaseUser
from pytest_django import Settings as SettingsWrapper
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaign.models import Campaign
from tests.factories import CampaignFactory, QuestionFactory, TeamFactory, UserFactory, make_member

REPO = Path(__file__).resolve().parent.parent
SHARED_EXAMPLES = REPO.parent / "shared" / "examples"


@dataclass
class Personas:
    """The people the visibility rules are about (STYLE.md: test with personas)."""

    campaign: Campaign
    organiser: AbstractBaseUser
    participant_a: AbstractBaseUser  # team A
    participant_b: AbstractBaseUser  # team B
    outsider: AbstractBaseUser  # signed in, no role in this campaign

    def client(self, who: str) -> APIClient:
        """An API client authenticated with the persona's token ('anonymous': none)."""
        client = APIClient()
        if who != "anonymous":
            token, _ = Token.objects.get_or_create(user=getattr(self, who))
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client


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


@pytest.fixture(scope="session")
def celery_worker() -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process on the configured broker (filesystem or Redis).

    Started once per session; ready when it has answered a ping task.
    """
    from config.celery import ping

    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo",
         "--loglevel=WARNING", "--without-gossip", "--without-mingle",
         "--hostname", f"pytest-{os.getpid()}@%h"],
        cwd=REPO, env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
    )
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
