"""Test helpers shared across the suite (fixtures live in the conftest files)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaign.models import Campaign

# The test client's response (json(), status_code); DRF's stubs type it too narrowly.
Upload = Callable[..., Any]

REPO = Path(__file__).resolve().parent.parent
#: The toy R2C2 campaign the tests run on (tests/data/README.md has its hand-computed scores).
TOY = REPO / "tests" / "data" / "toy"


@dataclass
class Personas:
    """The people the visibility rules are about (docs/access.md)."""

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



def make_zip(members: dict[str, bytes]) -> bytes:
    """A zip of `members` (name -> content), as a bulk upload sends it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def example(name: str) -> bytes:
    """A file of the toy campaign (tests/data/toy)."""
    return (TOY / name).read_bytes()


def share_pr_runs(personas: Personas) -> None:
    """Move the campaign past pr_due: PR runs are now shared, AC still open."""
    campaign = personas.campaign
    now = timezone.now()
    campaign.topics_release = now - timedelta(days=10)
    campaign.pr_due = now - timedelta(days=1)
    campaign.ac_due = now + timedelta(days=7)
    campaign.save()


def set_clock(monkeypatch: pytest.MonkeyPatch, moment: datetime, *modules: str) -> None:
    """Each module's `timezone.now()` answers `moment`: the tests of a deadline see the
    minute a message names, whatever the time the test runs at."""
    frozen = SimpleNamespace(now=lambda: moment)
    for module in modules:
        monkeypatch.setattr(f"{module}.timezone", frozen)


#: The queues a worker of the service consumes (CELERY_TASK_ROUTES in config/settings.py).
ALL_QUEUES = "celery,grading,scoring"


def start_worker(env: dict[str, str], *, queues: str = ALL_QUEUES,
                 name: str = "pytest") -> subprocess.Popen[bytes]:
    """A real Celery worker process consuming `queues` with `env`."""
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo",
         "--loglevel=WARNING", "--without-gossip", "--without-mingle", "-Q", queues,
         "--hostname", f"{name}-{os.getpid()}@%h"],
        cwd=REPO, env=env,
    )


def upload_toy_ac_run(personas: Personas, upload: Upload) -> int:
    """The toy campaign's AC run WASEDA-AC-1 uploaded through the API, after the PR runs
    it cites (shared at the PR deadline); its id."""
    upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
    share_pr_runs(personas)
    response = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1"))
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def forget_other_workers() -> None:
    """Forget the heartbeats of the workers other tests started (a real worker writes its
    own to the test database): a test of the reaper or the stall list sees the workers it
    records, and none else. Done in the test's transaction, so undone with it."""
    from grading.models import WorkerHeartbeat

    WorkerHeartbeat.objects.all().delete()


def signed_in(personas: Personas, who: str) -> Client:
    """A page client with the persona signed in (a session, as a browser has)."""
    client = Client()
    client.force_login(getattr(personas, who))
    return client


def live_processes(group: int) -> list[int]:
    """Processes of a process group that have not exited (zombies aside: PID 1 of a
    container does not always reap the orphans it inherits)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if fields[0] != "Z" and int(fields[2]) == group:
            alive.append(int(stat.parent.name))
    return alive
