"""Run files that arrive without a track: a zip of them (the API's bulk upload) or files
on disk (`submit_runs`). Each goes to the track its name (or, for ranking and response
runs, its content) points to, and is submitted on its own through `run_submit`."""

from __future__ import annotations

import stat
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from campaign.models import Track, TrackKind
from submissions.formats.common import ASCII_WHITESPACE, UTF8_BOM
from submissions.formats.run_names import parse_run_name
from submissions.formats.trec_run import parse_rubric_run_name
from submissions.models import Run, RunStatus
from submissions.services import BAD_RUN_NAME, INVALID_RUN, RunRefused, run_submit

ZIP_NOT_A_ZIP = "the file is not a zip archive"
ZIP_UNSAFE_NAME = "member {member!r} has an unsafe path; expected plain run file names"
ZIP_TOO_MANY = "the zip has {count} members; the limit is {limit}"
ZIP_TOO_LARGE = "the zip unpacks to {size} bytes; the limit is {limit}"
ZIP_EMPTY = "the zip holds no run files"
ZIP_NO_TRACK = "run {name}: the campaign has no {kind} track to put it in"
ZIP_MEMBER_CORRUPT = "member {member!r} is corrupt ({reason})"
BAD_ANY_RUN_NAME = "found run name {name!r}; expected {expected}"
AMBIGUOUS_TRACK = (
    "run {name}: the campaign has several tracks it may go to ({tracks}); name the track "
    "(the track field of the bulk upload, --track of submit_runs)"
)
EXPECTED_NAMES = {
    TrackKind.PR: "[Team]-PG-[n] or [Team]-PO-[n] for a PR run",
    TrackKind.AC: "[Team]-AC-[n] for an AC run",
    TrackKind.RANKING: (
        "[Team]-[label] for a ranking or response run (label: letters, digits and '_', "
        "at most 32)"
    ),
}
#: Bytes of a file enough to tell a response run (JSONL) from a TREC run.
HEAD_BYTES = 4096


def run_track(*, tracks: Sequence[Track], name: str, head: bytes) -> Track:
    """The track of a campaign (`tracks`) that the run file `name` goes to.

    A PR or AC name says its kind; the campaign's first track of that kind (by slug)
    takes it. A ranking or response name (``[Team]-[label]``, DESIGN.md section 10)
    does not: the campaign's only ranking/response track takes it; with several, the
    content decides (`head`, the file's first bytes): a response run is JSONL, so its
    first character is ``{``, which no TREC run line starts with. RunRefused (400,
    field ``name``) when no track or more than one fits.
    """
    r2c2_name = parse_run_name(name)
    if r2c2_name is not None:
        for track in tracks:
            if track.kind == r2c2_name.kind:
                return track
    rubric_tracks = [track for track in tracks if track.is_rubric]
    if rubric_tracks and parse_rubric_run_name(name) is not None:
        if len(rubric_tracks) > 1:
            kind = TrackKind.RESPONSE if _looks_like_jsonl(head) else TrackKind.RANKING
            rubric_tracks = [track for track in rubric_tracks if track.kind == kind]
        if len(rubric_tracks) == 1:
            return rubric_tracks[0]
        slugs = ", ".join(track.slug for track in tracks if track.is_rubric)
        raise _name_refused(AMBIGUOUS_TRACK.format(name=name, tracks=slugs))
    if r2c2_name is not None:
        raise _name_refused(ZIP_NO_TRACK.format(name=name, kind=r2c2_name.kind.upper()))
    if not rubric_tracks:
        raise _name_refused(BAD_RUN_NAME.format(name=name))
    kinds = {TrackKind.RANKING if track.is_rubric else TrackKind(track.kind) for track in tracks}
    expected = [text for kind, text in EXPECTED_NAMES.items() if kind in kinds]
    raise _name_refused(BAD_ANY_RUN_NAME.format(name=name, expected=", or ".join(expected)))


def _looks_like_jsonl(head: bytes) -> bool:
    content = head.removeprefix(UTF8_BOM).lstrip(ASCII_WHITESPACE.encode())
    return content.startswith(b"{")


def _name_refused(message: str) -> RunRefused:
    return RunRefused(400, message, [{"field": "name", "message": message}])


@dataclass(frozen=True)
class ZipOutcome:
    """What became of one member of a bulk upload."""

    member: str
    run: Run | None
    status: int  # HTTP-like: 201 stored, 400 invalid file, 4xx refused
    detail: str
    errors: list[dict[str, Any]]


def runs_submit_zip(
    *, campaign_tracks: list[Track], user: AbstractBaseUser, file: IO[bytes],
    description: str = "", track: Track | None = None, now: datetime | None = None,
) -> list[ZipOutcome]:
    """Submit every run file in a zip, each validated and stored on its own.

    The member's file name is the run name; its track is `track` when given, else the
    one `run_track` finds among `campaign_tracks`. The zip as a whole is refused
    (RunRefused) when it is not a zip, has unsafe paths (absolute, `..`, folders,
    links), too many members, or would unpack to more than the limit; nothing is
    stored then.
    """
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError):
        raise RunRefused(400, ZIP_NOT_A_ZIP) from None
    members = [info for info in archive.infolist() if not info.is_dir()]
    if len(members) > settings.RUN_ZIP_MAX_MEMBERS:
        raise RunRefused(400, ZIP_TOO_MANY.format(count=len(members),
                                                  limit=settings.RUN_ZIP_MAX_MEMBERS))
    for info in archive.infolist():
        name = info.filename
        is_link = stat.S_ISLNK(info.external_attr >> 16)
        if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/") \
                or "/" in name.rstrip("/") or "\\" in name or ":" in name or is_link:
            raise RunRefused(400, ZIP_UNSAFE_NAME.format(member=name))
    declared = sum(info.file_size for info in members)
    limit = settings.RUN_ZIP_MAX_UNPACKED_BYTES
    if declared > limit:
        raise RunRefused(400, ZIP_TOO_LARGE.format(size=declared, limit=limit))
    if not members:
        raise RunRefused(400, ZIP_EMPTY)

    outcomes: list[ZipOutcome] = []
    unpacked = 0
    for info in members:
        name = info.filename
        with tempfile.SpooledTemporaryFile(max_size=8 << 20) as spool:
            try:
                # Count what is really unpacked: a zip can lie about its sizes.
                with archive.open(info) as member:
                    while chunk := member.read(1 << 20):
                        unpacked += len(chunk)
                        if unpacked > limit:
                            raise RunRefused(400, ZIP_TOO_LARGE.format(size=unpacked,
                                                                       limit=limit))
                        spool.write(chunk)
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
                message = ZIP_MEMBER_CORRUPT.format(member=name, reason=exc)
                outcomes.append(ZipOutcome(name, None, 400, message,
                                           [{"field": "file", "message": message}]))
                continue
            size = spool.tell()
            spool.seek(0)
            try:
                found = track or run_track(tracks=campaign_tracks, name=name,
                                           head=spool.read(HEAD_BYTES))
                spool.seek(0)
                run = run_submit(track=found, user=user, name=name, file=spool, size=size,
                                 filename=name, description=description, now=now)
            except RunRefused as refused:
                outcomes.append(ZipOutcome(name, None, refused.status, refused.detail,
                                           refused.errors))
                continue
        if run.status == RunStatus.INVALID:
            outcomes.append(ZipOutcome(name, run, 400, INVALID_RUN.format(
                name=name, count=len(run.validation_report)), run.validation_report))
        else:
            outcomes.append(ZipOutcome(name, run, 201, f"{name} stored", []))
    return outcomes
