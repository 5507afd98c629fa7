"""Run files that arrive without a track, a zip (the API's bulk upload) or files on disk
(`submit_runs`): each goes to its track and through `run_submit` on its own, and a zip
reports every member's outcome (docs/submissions.md, "Bulk uploads")."""

from __future__ import annotations

import logging
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, transaction
from django.utils import timezone

from campaign.kinds import KINDS, kind_of, with_article
from campaign.models import Campaign, Track
from submissions.checks import BAD_RUN_NAME, RunRefused, run_check_membership, run_check_upload
from submissions.formats.common import ASCII_WHITESPACE, UTF8_BOM
from submissions.formats.run_names import parse_run_name
from submissions.formats.trec_run import parse_rubric_run_name
from submissions.models import Run, RunStatus
from submissions.services import INVALID_RUN, run_submit

logger = logging.getLogger(__name__)

ZIP_NOT_A_ZIP = "the file is not a zip archive"
ZIP_BAD_NAME = (
    "the zip names a member in bytes that are not UTF-8 although it says they are; "
    "expected plain run file names"
)
ZIP_ENCRYPTED = "member {member!r} is encrypted; expected run files without a password"
ZIP_UNSAFE_NAME = "member {member!r} has an unsafe path; expected plain run file names"
ZIP_TOO_MANY = "the zip has {count} members; the limit is {limit}"
ZIP_TOO_LARGE = "the zip unpacks to {size} bytes; the limit is {limit}"
ZIP_EMPTY = "the zip holds no run files"
ZIP_NO_TRACK = "run {name}: the campaign has no {kind} track to put it in"
ZIP_MEMBER_CORRUPT = "member {member!r} is corrupt ({reason})"
ZIP_DUPLICATE = "the zip holds {members} more than once; expected each run file once"
ZIP_MEMBER_FAILED = (
    "member {member!r} could not be stored ({reason}); nothing of it was stored: try it again"
)
BAD_ANY_RUN_NAME = "found run name {name!r}; expected {expected}"
AMBIGUOUS_TRACK = (
    "run {name}: the campaign has several tracks it may go to ({tracks}); name the track "
    "(the track field of the bulk upload, --track of submit_runs)"
)
#: What a label of a ranking or response run name may hold.
LABEL_RULE = " (label: letters, digits and '_', at most 32)"
#: Bytes of a file enough to tell a response run (JSONL) from a TREC run.
HEAD_BYTES = 4096
UNPACK_CHUNK = 1 << 20
# A member larger than this is spooled to a temporary file rather than kept in memory.
SPOOL_IN_MEMORY = 8 << 20
#: The general-purpose flag of a member whose data is encrypted (the zip specification, 4.4.4).
_ENCRYPTED = 0x1
# What reading a member of a damaged zip raises.
_CORRUPT = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, zlib.error)


def run_track(
    *, tracks: Sequence[Track], name: str, head: bytes | Callable[[], bytes]
) -> Track:
    """The track of `tracks` that run file `name` goes to: by the kind its name says, else the
    only ranking/response track, else by content (`head`: a response run starts with ``{``).
    RunRefused (400, field ``name``) when none or several fit."""
    r2c2_name = parse_run_name(name)
    if r2c2_name is not None:
        for track in tracks:
            if track.kind == r2c2_name.kind:
                return track
    rubric_tracks = [track for track in tracks if track.is_rubric]
    if rubric_tracks and parse_rubric_run_name(name) is not None:
        if len(rubric_tracks) > 1:
            first_bytes = head if isinstance(head, bytes) else head()
            jsonl = _looks_like_jsonl(first_bytes)
            rubric_tracks = [track for track in rubric_tracks
                             if (kind_of(track.kind).file_format == "JSONL") == jsonl]
        if len(rubric_tracks) == 1:
            return rubric_tracks[0]
        slugs = ", ".join(track.slug for track in tracks if track.is_rubric)
        raise _name_refused(AMBIGUOUS_TRACK.format(name=name, tracks=slugs))
    if r2c2_name is not None:
        raise _name_refused(ZIP_NO_TRACK.format(name=name, kind=r2c2_name.kind.upper()))
    if not rubric_tracks:
        raise _name_refused(BAD_RUN_NAME.format(name=name))
    raise _name_refused(BAD_ANY_RUN_NAME.format(name=name,
                                                expected=", or ".join(_expected_names(tracks))))


def _expected_names(tracks: Sequence[Track]) -> list[str]:
    """How the tracks' run names go, each naming rule once with the kinds that follow it:
    "[Team]-AC-[n] for an AC run", "[Team]-[label] for a ranking or response run (...)"."""
    present = {track.kind for track in tracks}
    nouns: dict[str, list[str]] = {}
    labelled: set[str] = set()
    for kind in KINDS.values():
        if kind.value in present:
            nouns.setdefault(kind.run_names, []).append(kind.noun)
            if kind.rubric:
                labelled.add(kind.run_names)
    return [f"{names} for {with_article(' or '.join(of))} run"
            + (LABEL_RULE if names in labelled else "") for names, of in nouns.items()]


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
    status: int  # HTTP-like: 201 stored, 400 invalid file, 4xx refused, 500 not stored
    detail: str
    errors: list[dict[str, Any]]


@dataclass
class _Member:
    """A member of the zip on its way: the track it goes to, once its rules are checked."""

    info: zipfile.ZipInfo
    track: Track | None = None
    outcome: ZipOutcome | None = None


def runs_submit_zip(
    *, campaign: Campaign, campaign_tracks: list[Track], user: AbstractBaseUser,
    file: IO[bytes], description: str = "", track: Track | None = None,
    now: datetime | None = None,
) -> list[ZipOutcome]:
    """Submit every run file of a zip, each on its own, and return every member's outcome.
    The zip and each member are checked before anything is unpacked or stored, in the order
    docs/submissions.md ("Bulk uploads") gives."""
    now = now or timezone.now()
    try:
        archive = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError):
        raise RunRefused(400, ZIP_NOT_A_ZIP) from None
    except UnicodeDecodeError:
        # zipfile decodes the names flagged UTF-8 as it reads the directory.
        raise RunRefused(400, ZIP_BAD_NAME) from None
    infos = _checked_members(archive)
    run_check_membership(campaign=campaign, user=user)

    members = [_Member(info) for info in infos]
    # track -> team -> the names of the members checked so far: each member's quota counts
    # the runs of its team and track before it in the zip.
    pending: dict[int, dict[str, list[str]]] = {}
    for member in members:
        _check_member(member, archive=archive, tracks=campaign_tracks, track=track, user=user,
                      description=description, now=now, pending=pending)

    _check_unpacked(archive, [m for m in members if m.outcome is None])

    for member in members:
        if member.outcome is None:
            member.outcome = _submit_member(member, archive=archive, user=user,
                                            description=description, now=now)
    return [member.outcome for member in members if member.outcome is not None]


def _checked_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The zip's members, or RunRefused for a zip that is refused as a whole."""
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
    # Checked before any member is read: zipfile cannot open one without its password
    # (and says so with a RuntimeError, not as a damaged zip).
    for info in members:
        if info.flag_bits & _ENCRYPTED:
            raise RunRefused(400, ZIP_ENCRYPTED.format(member=info.filename))
    counts = Counter(info.filename for info in members)
    twice = sorted(name for name, count in counts.items() if count > 1)
    if twice:
        raise RunRefused(400, ZIP_DUPLICATE.format(members=", ".join(map(repr, twice))))
    declared = sum(info.file_size for info in members)
    limit = settings.RUN_ZIP_MAX_UNPACKED_BYTES
    if declared > limit:
        raise RunRefused(400, ZIP_TOO_LARGE.format(size=declared, limit=limit))
    if not members:
        raise RunRefused(400, ZIP_EMPTY)
    return members


def _check_member(
    member: _Member, *, archive: zipfile.ZipFile, tracks: list[Track], track: Track | None,
    user: AbstractBaseUser, description: str, now: datetime,
    pending: dict[int, dict[str, list[str]]],
) -> None:
    """Find the member's track and check its rules (step 2), or give it its outcome."""
    name = member.info.filename
    try:
        found = track or run_track(tracks=tracks, name=name,
                                   head=lambda: _head(archive, member.info))
        in_track = pending.setdefault(found.pk, {})
        team = run_check_upload(track=found, user=user, name=name,
                                size=member.info.file_size, now=now, description=description,
                                pending=in_track)
    except RunRefused as refused:
        member.outcome = ZipOutcome(name, None, refused.status, refused.detail, refused.errors)
        return
    except _CORRUPT as exc:
        member.outcome = _corrupt(name, exc)
        return
    member.track = found
    in_track.setdefault(team.name, []).append(name)


def _head(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's first bytes, unpacking no more (only `run_track` may need them)."""
    with archive.open(info) as member:
        return member.read(HEAD_BYTES)


def _check_unpacked(archive: zipfile.ZipFile, members: list[_Member]) -> None:
    """Read the members through once (step 3): RunRefused past the real size limit; a
    corrupt member gets its outcome. Nothing is kept."""
    limit = settings.RUN_ZIP_MAX_UNPACKED_BYTES
    unpacked = 0
    for member in members:
        try:
            with archive.open(member.info) as stream:
                while chunk := stream.read(UNPACK_CHUNK):
                    unpacked += len(chunk)
                    if unpacked > limit:
                        raise RunRefused(400, ZIP_TOO_LARGE.format(size=unpacked, limit=limit))
        except _CORRUPT as exc:
            member.outcome = _corrupt(member.info.filename, exc)


def _submit_member(
    member: _Member, *, archive: zipfile.ZipFile, user: AbstractBaseUser, description: str,
    now: datetime,
) -> ZipOutcome:
    """Unpack one member and submit it (step 4); its outcome, whatever happens."""
    name = member.info.filename
    assert member.track is not None  # set by _check_member for every member left
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY) as spool:
        try:
            with archive.open(member.info) as stream:
                shutil.copyfileobj(stream, spool, UNPACK_CHUNK)
        except _CORRUPT as exc:  # read well a moment ago; a file changed underneath
            return _corrupt(name, exc)
        size = spool.tell()
        spool.seek(0)
        try:
            # A savepoint per member: a failure rolls back this member only, and leaves
            # the connection usable for the next (PostgreSQL aborts a whole transaction).
            with transaction.atomic():
                run = run_submit(track=member.track, user=user, name=name, file=spool,
                                 size=size, filename=name, description=description, now=now)
        except RunRefused as refused:
            return ZipOutcome(name, None, refused.status, refused.detail, refused.errors)
        except (DatabaseError, OSError) as exc:
            logger.exception("bulk upload: member %r could not be stored", name)
            message = ZIP_MEMBER_FAILED.format(member=name, reason=type(exc).__name__)
            return ZipOutcome(name, None, 500, message, [{"field": "file", "message": message}])
    if run.status == RunStatus.INVALID:
        return ZipOutcome(name, run, 400, INVALID_RUN.format(
            name=name, count=len(run.validation_report)), run.validation_report)
    return ZipOutcome(name, run, 201, f"{name} stored", [])


def _corrupt(name: str, exc: BaseException) -> ZipOutcome:
    message = ZIP_MEMBER_CORRUPT.format(member=name, reason=exc)
    return ZipOutcome(name, None, 400, message, [{"field": "file", "message": message}])
