"""When a track takes participants' runs, and the refusal outside that window in the
campaign's time zone to the minute (docs/access.md, "Deadlines"). Standard library only:
the client `evalctl` says the same before it sends a file."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

#: A moment as the messages and pages show it, in the campaign's zone.
MINUTE = "%Y-%m-%d %H:%M"

NOT_OPEN_YET = "track {track} opens at {opens} ({zone}, with the questions); it is {now} there now"
DEADLINE_PASSED = (
    "track {track} closed at {due} ({zone}); it is {now} there now: uploads are refused"
)


def campaign_time(at: datetime, zone: str) -> str:
    """`at` (timezone-aware) in the time zone `zone`, to the minute: ``2026-10-01 23:59``."""
    return at.astimezone(ZoneInfo(zone)).strftime(MINUTE)


def window_refusal(
    *, track: str, opens: datetime, due: datetime, now: datetime, zone: str
) -> str | None:
    """Why a participant's run for `track` is refused at `now`, or None while the track
    is open: from `opens` (the questions' release) to `due`, both included."""
    if now < opens:
        return NOT_OPEN_YET.format(track=track, opens=campaign_time(opens, zone), zone=zone,
                                   now=campaign_time(now, zone))
    if now > due:
        return DEADLINE_PASSED.format(track=track, due=campaign_time(due, zone), zone=zone,
                                      now=campaign_time(now, zone))
    return None
