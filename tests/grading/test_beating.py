"""Heartbeats outlive a database error: the next beat tries again (grading.work.beating)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest
from django.db import OperationalError
from pytest_django import Settings as SettingsWrapper

from grading.work.beating import Heartbeat
from grading.work.claims import Claim, claim_heartbeat

#: How long a test waits for beats that come every SHORTEST_PAUSE: a failure, never a pace.
PATIENCE = 30.0


def test_a_beat_the_database_refuses_is_logged_and_the_next_one_is_made(
    caplog: pytest.LogCaptureFixture,
) -> None:
    beats: list[str] = []
    third = threading.Event()

    def beat() -> None:
        beats.append("tried")
        if len(beats) <= 2:
            raise OperationalError("database is locked")
        third.set()

    heartbeat = Heartbeat(beat, every=0.0, name="heartbeat-test", at_start=True)
    heartbeat.start()
    try:
        assert third.wait(PATIENCE)
    finally:
        heartbeat.stop()
    refused = [r.getMessage() for r in caplog.records if r.name == "grading.work.beating"]
    assert refused[:2] == ["heartbeat-test: beat not recorded, the next one tries again: "
                           "database is locked"] * 2


@dataclass(frozen=True)
class _FlakyClaim(Claim):
    """A claim whose first beat meets a dropped connection and whose second finds it gone."""

    touched: list[bool] = field(default_factory=list, compare=False)

    def touch(self) -> bool:
        self.touched.append(True)
        if len(self.touched) == 1:
            raise OperationalError("terminating connection due to administrator command")
        return False


def test_a_claims_heartbeat_still_notices_the_claim_lost_after_a_database_error(
    settings: SettingsWrapper,
) -> None:
    settings.GRADING_STALE_SECONDS = 0  # beats as often as a heartbeat ever does
    claim = _FlakyClaim(token="task-1", part_id=1, job_id=1, round="r1")

    with claim_heartbeat(claim, name="heartbeat-part-1"):
        assert claim.lost.wait(PATIENCE)  # the thread lived on to make the second beat

    assert len(claim.touched) >= 2
