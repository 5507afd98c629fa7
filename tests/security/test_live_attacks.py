"""Attacks on a real deployment: gunicorn serving the site as production does,
DEBUG off, on the test run's database (PostgreSQL in CI), attacked over the network.

The world is the toy campaign of the visibility tests (tests/security/world.py), graded
and scored, with a ranking track and a test bank, and a second campaign whose participant
(eve) is nobody in the first. Its rows are committed (a transactional test), so the
site's processes see them. Then every kind of attack below is sent through loopback,
and every answer is held to the API's promises (docs/api.md):

- no answer is a 5xx, under /api/ or on the pages;
- every answer under /api/ is JSON (errors in `{"detail", "errors"}`), but for the files
  a client asked for (a CSV, a zip, a run file, qrels, the docs page, the browsable API
  for a browser that asked for HTML);
- an error of a page is an HTML page;
- what one may not see answers exactly as a missing id does (404, the same body);
- password guessing on the token endpoint ends in a 429 with Retry-After.

A failure lists each broken promise as (method, path, status, content type) and why,
with the errors of gunicorn's log (the tracebacks of any 500).

Not sent: requests gunicorn refuses itself, with its own HTML page, before the site sees
them (a control character in a header value, a header over 8190 bytes, a request line
over 4094): no code of the site can answer those in JSON.
"""

from __future__ import annotations

import io
import json
import secrets
import socket
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from campaign.models import Campaign
from grading.openai_judge import OpenAIJudge
from submissions.models import Run
from tests.security.live import (
    WORKERS,
    Answer,
    LiveSite,
    Request,
    serving,
    site_environment,
)
from tests.security.world import MISSING_ID, PR_SHARED, World, build_world, set_phase
from tests.support import Personas, example, make_zip

pytestmark = pytest.mark.django_db(transaction=True)

SLUG = "toy"
API = "/api/v1"
#: The personas whose tokens and sessions the attacks use (tests/security/world.py).
WHO = ("organiser", "own", "other", "elsewhere", "outsider")
METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
PASSWORD = "secret-pass-123"  # tests.factories.UserFactory's
#: An integer no database column holds, and one just past PostgreSQL's bigint.
HUGE = "9" * 40
PAST_BIGINT = str(2**63)

#: The OpenAPI document and its docs page.
DOCUMENTS = ("/api/schema/", "/api/docs/")
#: The health check: JSON for monitors, outside /api/.
HEALTH = "/healthz"
#: Answers under /api/ that are files by design, when they succeed: media types a client
#: gets because it asked for that file or format.
FILE_TYPES = {"text/csv", "text/plain", "application/zip", "application/x-tex",
              "application/jsonl", "application/vnd.oai.openapi"}


# --- the promises --------------------------------------------------------------------


@dataclass(frozen=True)
class Offence:
    method: str
    path: str
    status: int
    content_type: str
    why: str

    def __str__(self) -> str:
        return (f"{self.method} {self.path} -> {self.status} "
                f"[{self.content_type or 'no content type'}]: {self.why}")


def offence(answer: Answer, why: str) -> Offence:
    return Offence(*answer.where(), why=why)


def is_api(path: str) -> bool:
    return path.startswith("/api/")


#: What gunicorn answers itself for a request line or header too long.
GUNICORN_REFUSALS = (414, 431)


def asked_for_html(answer: Answer) -> bool:
    """The docs page: the one page for people under /api/."""
    return answer.path == DOCUMENTS[1]


def broken_promise(answer: Answer) -> str | None:
    """Why `answer` breaks the promises of the module docstring, or None."""
    if answer.status >= 500:
        return "a server error"
    if is_api(answer.path):
        if answer.is_json() or (answer.status == 204 and not answer.body):
            return None
        if answer.status >= 300:
            return "an error (or redirect) under /api/ that is not JSON"
        if answer.media_type in FILE_TYPES:
            return None
        if answer.media_type == "text/html" and asked_for_html(answer):
            return None
        return "a success under /api/ that is neither JSON nor a file asked for"
    if answer.status >= 400 and answer.media_type != "text/html" and answer.path != HEALTH:
        # Too long a line: gunicorn refuses it before Django, not knowing the path, in
        # the API's JSON (config/gunicorn_errors.py); no browser sends such a request.
        if answer.status in GUNICORN_REFUSALS and answer.is_json():
            return None
        return "an error of a page that is not an HTML page"
    return None


def offences(site: LiveSite) -> list[Offence]:
    return [offence(answer, why) for answer in site.answers
            if (why := broken_promise(answer)) is not None]


# --- the world and the site ------------------------------------------------------------


@dataclass
class Target:
    """The site under attack and what the attackers hold."""

    site: LiveSite
    world: World
    tokens: dict[str, str]  # persona -> API key
    sessions: dict[str, str]  # persona -> session cookie of a signed-in browser
    ids: dict[str, int]  # world.ids
    expired_token: str  # a key that was deleted
    promises: list[Offence] = field(default_factory=list)  # broken, beyond broken_promise

    def api(self, method: str, target: str, *, who: str | None = None,
            body: bytes | None = None, headers: dict[str, str] | None = None) -> Request:
        """An API client's request: the persona's token."""
        return Request(method, target, body, headers, self.tokens[who] if who else None)

    def browser(self, method: str, target: str, *, who: str | None = None,
                body: bytes | None = None, headers: dict[str, str] | None = None) -> Request:
        """A browser's request: the persona's session cookie, no token."""
        sent = dict(headers or {})
        if who:
            sent.setdefault("Cookie", f"{settings.SESSION_COOKIE_NAME}={self.sessions[who]}")
        return Request(method, target, body, sent)

    def send(self, method: str, target: str, *, who: str | None = None,
             body: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
        return self.site.send_request(self.api(method, target, who=who, body=body,
                                               headers=headers))

    def page(self, method: str, target: str, *, who: str | None = None,
             body: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
        return self.site.send_request(self.browser(method, target, who=who, body=body,
                                                   headers=headers))

    def expect(self, answer: Answer, ok: bool, why: str) -> None:
        if not ok:
            self.promises.append(offence(answer, why))


def session_of(world: World, who: str) -> str:
    client = Client()
    client.force_login(world.user(who))
    return client.cookies[settings.SESSION_COOKIE_NAME].value


@pytest.fixture
def world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    built = build_world(personas, toy_ac_run, judge)
    set_phase(built, PR_SHARED)
    return built


@pytest.fixture
def target(world: World, worker_env: dict[str, str], media_in_tmp: Path,
           tmp_path: Path) -> Iterator[Target]:
    tokens = {who: Token.objects.get_or_create(user=world.user(who))[0].key for who in WHO}
    # A key that worked once: the user's token was replaced since (as after a leak).
    gone = Token.objects.create(user=User.objects.create_user("mallory", password=PASSWORD))
    expired = gone.key
    gone.delete()
    env = site_environment(worker_env, database_url=worker_env["DATABASE_URL"],
                           var_dir=tmp_path / "site-var", media=media_in_tmp,
                           secret_key=settings.SECRET_KEY)
    with serving(env, log=tmp_path / "gunicorn.log") as site:
        yield Target(site=site, world=world, tokens=tokens,
                     sessions={who: session_of(world, who) for who in WHO},
                     ids=dict(world.ids), expired_token=expired)


# --- request bodies --------------------------------------------------------------------


def multipart(fields: dict[str, str | bytes],
              files: dict[str, tuple[str, bytes]] | None = None) -> tuple[bytes, str]:
    """A multipart/form-data body, built by hand so that any byte may be sent."""
    boundary = secrets.token_hex(16)
    parts = []
    for name, value in fields.items():
        data = value.encode() if isinstance(value, str) else value
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     .encode() + data + b"\r\n")
    for name, (filename, data) in (files or {}).items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                     f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                     .encode("utf-8", "surrogateescape") + data + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def upload(target: Target, who: str, *, name: str, content: bytes, track: str = "ac",
           filename: str | None = None, fields: dict[str, str | bytes] | None = None) -> Answer:
    body, kind = multipart({"track": track, "name": name, **(fields or {})},
                           {"file": (filename or name, content)})
    return target.send("POST", f"{API}/campaigns/{SLUG}/runs/", who=who, body=body,
                       headers={"Content-Type": kind})


def bulk(target: Target, who: str, content: bytes, **fields: str | bytes) -> Answer:
    body, kind = multipart(dict(fields), {"file": ("runs.zip", content)})
    return target.send("POST", f"{API}/campaigns/{SLUG}/runs/bulk/", who=who, body=body,
                       headers={"Content-Type": kind})


def line_level(answer: Answer) -> bool:
    """A 400 whose errors name the lines of a run file."""
    errors = answer.json().get("errors", []) if answer.is_json() else []
    return answer.status == 400 and bool(errors) and all("line" in e for e in errors)


def as_json(value: Any) -> tuple[bytes, dict[str, str]]:
    return json.dumps(value).encode(), {"Content-Type": "application/json"}


# --- zips that lie ---------------------------------------------------------------------


def zip_bomb(megabytes: int, *, declared: int | None = None) -> bytes:
    """A zip of one member of `megabytes` MB of zero bytes, deflated to about 1 KB a MB;
    with `declared`, its headers claim that size instead."""
    chunk = bytes(1 << 20)
    # A block flushed in full refers to nothing before it: the same bytes may be repeated.
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(chunk, crc)
    return raw_zip("WASEDA-AC-3", block * megabytes + last, crc=crc,
                   size=declared or megabytes << 20)


def raw_zip(name: str | bytes, deflated: bytes, *, crc: int, size: int, flags: int = 0,
            method: int = 8) -> bytes:
    """One member, its headers written by hand: any flag, name or size may be sent."""
    raw = name if isinstance(name, bytes) else name.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, method, 0, 0, crc,
                        len(deflated), size, len(raw), 0) + raw
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, flags, method, 0, 0,
                          crc, len(deflated), size, len(raw), 0, 0, 0, 0, 0, 0) + raw
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central),
                      len(local) + len(deflated), 0)
    return local + deflated + central + end


def member(name: str | bytes, content: bytes, **options: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(content) + compressor.flush()
    return raw_zip(name, deflated, crc=zlib.crc32(content), size=len(content), **options)


def with_link(name: str, content: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(name)
        info.external_attr = 0o120777 << 16  # a symbolic link
        archive.writestr(info, content)
    return buffer.getvalue()


# --- the attacks ------------------------------------------------------------------------


def attack_run_files(target: Target) -> None:
    """Control characters, huge fields and bad encodings in run files and their fields."""
    ac = example("WASEDA-AC-1")
    nul_answer = ac.replace(b"Buzz Aldrin;85", b"Buzz\x00Aldrin;85")
    refused = upload(target, "own", name="WASEDA-AC-2", content=nul_answer)
    target.expect(refused, line_level(refused), "a NUL in an answer, not a line-level 400")
    for content in (ac.replace(b"Buzz", b"Bu\x01\x1b\x7fzz"),
                    ac.replace(b"Buzz", "Bu\u0085\u2028zz".encode()),
                    b"\xff\xfe" + ac.decode().encode("utf-16-le"), b"\xed\xa0\x80;1\n",
                    b"<D001>\n" + b"x" * 100_000 + b";50\n</D001>\n", b"\x00" * 4096, b""):
        upload(target, "own", name="WASEDA-AC-2", content=content)
    # A 50 MB answer: just under the file cap (validated), and over it (refused whole).
    for size, status in ((settings.RUN_MAX_BYTES - 64, 400), (settings.RUN_MAX_BYTES + 1, 413)):
        answer = b"<D001>\n" + b"a" * (size - 19) + b";50\n</D001>\n"  # `size` bytes
        refused = upload(target, "own", name="WASEDA-AC-2", content=answer)
        target.expect(refused, refused.status == status and (status == 413 or line_level(
            refused)), f"a {size}-byte file, not a {status}")
    # A ranking run (the open rubric track) with NUL and a 100,000-character field.
    for content in (b"D001 Q0 d\x001 1 1.0 tag\n", b"D001 Q0 " + b"d" * 100_000 + b" 1 1.0 t\n",
                    b'{"qid": "D001", "text": "a\\u0000b"}\n',
                    b'{"qid": "D001", "text": "' + b"w " * 60_000 + b'"}\n',
                    b'{"qid": "\\ud800", "text": "lone surrogate"}\n',
                    b'{"qid": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"):
        upload(target, "own", name="WASEDA-bm25", content=content, track="dl")
    # The form's own fields.
    good = example("WASEDA-AC-1")
    for description in ("x" * 1_000_000, "a\x00b", b"\xff\xfe not utf-8"):
        upload(target, "own", name="WASEDA-AC-2", content=good,
               fields={"description": description})
    for track in ("ac\x00", "no-such-track"):
        upload(target, "own", name="WASEDA-AC-2", content=good, track=track)
    for name in ("WASEDA\x00-AC-2", "W" * 100_000, "日本-AC-1"):
        upload(target, "own", name=name, content=good)
    for filename in ("../../etc/passwd", "/abs/WASEDA-AC-2", "nul\x00name", "..",
                     "\u202eevil.txt"):
        upload(target, "own", name="WASEDA-AC-2", content=good, filename=filename)
    # A PR run while PR runs are closed, and from someone of no team.
    upload(target, "own", name="WASEDA-PG-1", content=b"D001;1;d;bad\x00text\n", track="pr")
    upload(target, "elsewhere", name="ELSE-AC-1", content=good)


def attack_pr_files_while_open(target: Target) -> None:
    """The PR track reopened: a PR run's passage with NUL, 100,000 characters, junk."""
    campaign = Campaign.objects.get(slug=SLUG)
    due, campaign.pr_due = campaign.pr_due, campaign.ac_due
    campaign.save(update_fields=["pr_due"])
    try:
        for content in (b"D001;1;d;bad\x00text\n", b"D001;1;d;" + b"p" * 100_000 + b"\n"):
            refused = upload(target, "own", name="WASEDA-PG-1", content=content, track="pr")
            target.expect(refused, line_level(refused), "not a line-level 400")
        for content in (b"D001\x00;1;d;text\n", b"D001;" + HUGE.encode() + b";d;t\n",
                        b"D001;-1;d;t\n", b"D001;1;" + b"d" * 10_000 + b";t\n",
                        b"\x1b[2J;1;d;t\n", "D001;\uff11;d;t\n".encode()):  # a full-width 1
            upload(target, "own", name="WASEDA-PG-1", content=content, track="pr")
    finally:
        campaign.pr_due = due
        campaign.save(update_fields=["pr_due"])


def attack_bulk_zips(target: Target) -> None:
    ac = example("WASEDA-AC-1")
    # Good members first, then a bad one: each has its outcome, none a 5xx.
    mixed = bulk(target, "own", make_zip({"WASEDA-AC-2": ac, "WASEDA-AC-3": ac.replace(
        b"Buzz Aldrin;85", b"Buzz\x00Aldrin;85")}))
    outcomes = [r["status"] for r in mixed.json().get("results", [])] if mixed.is_json() else []
    target.expect(mixed, mixed.status == 207 and outcomes == [201, 400],
                  f"a good member then a bad one, not 207 with [201, 400] ({outcomes})")
    for bomb in (zip_bomb((settings.RUN_ZIP_MAX_UNPACKED_BYTES >> 20) + 1),
                 zip_bomb(64, declared=len(ac))):
        refused = bulk(target, "own", bomb)
        target.expect(refused, refused.status == 400, "a zip bomb, not a 400")
    for zipped in (*(member(name, ac) for name in (
            "../WASEDA-AC-4", "/WASEDA-AC-4", "C:\\WASEDA-AC-4", "dir/WASEDA-AC-4",
            "WASEDA-AC-4\x01", "..", "WASEDA-AC-4/")),
            with_link("WASEDA-AC-4", b"/etc/passwd"),
            member(b"WASEDA-\xff\xfe-AC-4", ac, flags=0x800),  # says UTF-8, is not
            member("WASEDA-AC-4", ac, flags=0x1),  # encrypted
            member("WASEDA-AC-4", ac, method=99),  # an unknown compression
            member("WASEDA-AC-4", ac, method=12),  # bzip2 that is not
            make_zip({f"WASEDA-AC-{n}": ac for n in range(1, 2000)})):
        refused = bulk(target, "own", zipped)
        target.expect(refused, refused.status == 400, "a zip that is refused, not a 400")
    bulk(target, "own", make_zip({"inner.zip": make_zip({"WASEDA-AC-4": ac})}))
    bulk(target, "own", make_zip({"WASEDA-AC-4": make_zip({"WASEDA-AC-4": ac})}))
    whole = make_zip({"WASEDA-AC-4": ac})
    for content in (b"not a zip at all", b"", whole[: len(whole) // 2], whole[:-10],
                    b"PK\x05\x06" + bytes(18), b"PK\x03\x04" + bytes(100), bytes(4096)):
        bulk(target, "own", content)
    bulk(target, "own", whole, description="x" * 1_000_000)
    bulk(target, "own", whole, track="nope\x00")
    bulk(target, "elsewhere", whole)


def attack_json_fields(target: Target) -> None:
    judgment = f"{API}/judgments/{target.ids['judgment']}/"
    item = f"{API}/testbank/{target.ids['bank_item']}/"
    bank = f"{API}/campaigns/{SLUG}/testbank/"
    bodies: list[Any] = [
        {"entailed": False, "note": "a\x00b"}, {"entailed": False, "note": "n" * 1_000_000},
        {"entailed": "\x00", "note": "x"}, {"note": ["x"]}, {"note": {"x": 1}},
        {"correct": True, "relevant": [int(HUGE)], "note": "x"},
        {"correct": True, "relevant": [-1, 1e308], "note": "x"},
        {"grade": int(HUGE), "note": "x"}, {"reason": "\x07", "note": "x"},
        {"entailed": False, "note": "\ud800"}, None, [], "text", 12, {"\x00": 1},
    ]
    for value in bodies:
        body, headers = as_json(value)
        target.send("PATCH", judgment, who="organiser", body=body, headers=headers)
    for value in ({"qid": "D001\x00", "target": "questions", "text": "t"},
                  {"qid": "D001", "target": "questions", "text": "t\x00"},
                  {"qid": "D001", "target": "questions", "text": "t" * 1_000_000},
                  {"qid": "Q" * 100_000, "target": "questions", "text": "t"},
                  {"qid": "D001", "target": "\x00", "text": "t"},
                  {"qid": "D001", "target": "questions", "text": "t",
                   "answers": ["a"] * 100_000},
                  {"qid": "D001", "target": "questions", "text": "t", "answers": "a"},
                  {"qid": ["D001"], "target": "questions", "text": {"t": 1}}):
        body, headers = as_json(value)
        target.send("POST", bank, who="organiser", body=body, headers=headers)
    for value in ({"text": "x\x00", "note": "n"}, {"text": "x", "note": "n" * 1_000_000},
                  {"status": "\x00", "note": "n"}, {"answers": [None], "note": "n"}):
        body, headers = as_json(value)
        target.send("PATCH", item, who="organiser", body=body, headers=headers)
    target.send("DELETE", f"{item}?note=%00", who="organiser")
    target.send("DELETE", f"{item}?note={'n' * 3000}", who="organiser")
    for value in ({"target": "\x00", "n": 1}, {"n": int(HUGE)}, {"n": -1}):
        body, headers = as_json(value)
        target.send("POST", f"{bank}generate/", who="organiser", body=body, headers=headers)
    # Deeply nested JSON and a lone surrogate: what Python's json module cannot hold.
    for body in (b"[" * 100_000 + b"]" * 100_000, b'{"note": "\\ud800"}'):
        for method, path in (("PATCH", judgment), ("POST", bank), ("POST", f"{API}/auth/token/")):
            refused = target.send(method, path, who="organiser", body=body,
                                  headers={"Content-Type": "application/json"})
            target.expect(refused, refused.status == 400, "JSON that cannot be read, not a 400")
    for value in ({"username": "alice\x00", "password": "x"},
                  {"username": "a" * 1_000_000, "password": "x"},
                  {"username": ["alice"], "password": {"p": 1}}, {"username": "\ud800"}):
        body, headers = as_json(value)
        target.send("POST", f"{API}/auth/token/", body=body, headers=headers)
    # The reference judgments and leaderboard of the ranking track (meta-evaluation).
    for qrels, board in ((b"D001 0 d1 \x00\n", b"run,score\nx\x00,1\n"),
                         (b"D001 0 d1 " + HUGE.encode() + b"\n", b"run,score\nx,1e999\n"),
                         (b"\xff\xfe\x00", b"\xff"), (b"q" * 100_000, b"r" * 100_000)):
        body, kind = multipart({"track": "dl", "relevant_level": "1"},
                               {"qrels": ("qrels.txt", qrels), "leaderboard": ("b.csv", board)})
        target.send("POST", f"{API}/campaigns/{SLUG}/reference/", who="organiser", body=body,
                    headers={"Content-Type": kind})
    for level in ("\x00", HUGE, "-1", "nan"):
        body, kind = multipart({"track": "dl", "relevant_level": level},
                               {"qrels": ("qrels.txt", b"D001 0 d1 1\n")})
        target.send("POST", f"{API}/campaigns/{SLUG}/reference/", who="organiser", body=body,
                    headers={"Content-Type": kind})


def attack_huge_bodies(target: Target) -> None:
    twelve_mb = json.dumps({"note": "n" * (12 << 20)}).encode()
    for method, path in (("PATCH", f"{API}/judgments/{target.ids['judgment']}/"),
                         ("POST", f"{API}/campaigns/{SLUG}/testbank/"),
                         ("POST", f"{API}/auth/token/"), ("POST", f"{API}/campaigns/{SLUG}/runs/"),
                         ("POST", f"{API}/no-such-endpoint/")):
        too_large = target.send(method, path, who="organiser", body=twelve_mb,
                                headers={"Content-Type": "application/json"})
        target.expect(too_large, too_large.status in (404, 413, 415),
                      "a 12 MB body, not a 413 (or the 404 or 415 it gets without one)")
    form = b"description=" + b"d" * (12 << 20)
    target.send("POST", f"{API}/campaigns/{SLUG}/runs/", who="own", body=form,
                headers={"Content-Type": "application/x-www-form-urlencoded"})
    body, kind = multipart({"track": "ac", "name": "WASEDA-AC-2", "description": "d" * (12 << 20)},
                           {"file": ("WASEDA-AC-2", example("WASEDA-AC-1"))})
    target.send("POST", f"{API}/campaigns/{SLUG}/runs/", who="own", body=body,
                headers={"Content-Type": kind})
    many = "&".join(f"f{n}=1" for n in range(5000)).encode()
    target.send("POST", f"{API}/auth/token/", body=many,
                headers={"Content-Type": "application/x-www-form-urlencoded"})
    files = {f"file{n}": (f"f{n}", b"x") for n in range(500)}
    body, kind = multipart({"track": "ac", "name": "WASEDA-AC-2"}, files)
    target.send("POST", f"{API}/campaigns/{SLUG}/runs/", who="own", body=body,
                headers={"Content-Type": kind})


def attack_content_types(target: Target) -> None:
    runs = f"{API}/campaigns/{SLUG}/runs/"
    judgment = f"{API}/judgments/{target.ids['judgment']}/"
    valid, json_type = as_json({"entailed": False, "note": "n"})
    for kind in ("application/json", "text/plain", "application/xml", "multipart/form-data",
                 "multipart/form-data; boundary=", "multipart/form-data; boundary=x",
                 "application/x-www-form-urlencoded; charset=no-such-charset",
                 "application/json; charset=utf-16", "application/json; charset=é",
                 "garbage", "", "image/png", "*/*"):
        target.send("POST", runs, who="own", body=valid + b"\r\n--x\r\n", headers={
            "Content-Type": kind})
        target.send("PATCH", judgment, who="organiser", body=valid, headers={
            "Content-Type": kind})
        target.send("POST", f"{API}/auth/token/", body=b"username=alice&password=%ff%00",
                    headers={"Content-Type": kind})
    # Malformed bodies of the right type.
    for body in (b"{", b"\xff\xfe", b'{"note": "\\ud800"}', b"\x00", b'{"a": NaN}',
                 b'{"a": 1e99999}'):
        target.send("PATCH", judgment, who="organiser", body=body, headers=json_type)
    target.send("POST", f"{API}/auth/token/", body=b"username=%zz&password=%",
                headers={"Content-Type": "application/x-www-form-urlencoded"})
    target.send("POST", runs, who="own", body=b"--x\r\nContent-Disposition: form-data\r\n\r\n",
                headers={"Content-Type": "multipart/form-data; boundary=x"})


def attack_accept_headers(target: Target) -> None:
    boards = f"{API}/campaigns/{SLUG}/leaderboards/"
    queries = ("", "?format=csv", "?format=json", "?format=api", "?format=xml", "?format=%00",
               "?format=csv%00", f"?format={'c' * 2000}")
    accepts = (None, "application/json", "text/html", "*/*", "garbage", "text/csv",
               "application/json; q=garbage", "é/ü", "text/html;q=0.1, */*;q=0",
               "application/xml")
    paths = (boards, f"{API}/campaigns/", f"{API}/runs/{MISSING_ID}/",
             f"{API}/no-such-endpoint/")
    target.site.send_all(
        target.api("GET", path + query, who="organiser",
                   headers={"Accept": accept} if accept is not None else {})
        for query in queries for accept in accepts for path in paths)
    target.site.send_all(
        request for accept in ("text/html", "*/*", "garbage") for request in (
            target.api("GET", f"{API}/campaigns/{SLUG}/runs/", headers={"Accept": accept}),
            target.api("POST", f"{API}/auth/token/", headers={"Accept": accept}),
            target.api("GET", f"{API}/campaigns/{SLUG}/qrels/", who="own",
                       headers={"Accept": accept})))


def attack_tokens(target: Target) -> None:
    paths = (f"{API}/campaigns/", f"{API}/campaigns/{SLUG}/runs/",
             f"{API}/runs/{target.ids['own_ac']}/", f"{API}/campaigns/{SLUG}/judgments/",
             f"{API}/no-such-endpoint/")
    key = target.tokens["own"]
    for authorization in (
        "Token not-a-key", "Bearer not-a-key", "Token", "Bearer", "Token a b", "Basic YTpi",
        f"Token {target.expired_token}", f"Bearer {target.expired_token}", f"token {key}x",
        "Token " + "k" * 4_000, "Token é", "Bearer\t" + key, "Negotiate x",
        f"Token {key}\t", "",
    ):
        target.site.send_all(Request(method, path, headers={"Authorization": authorization})
                             for method in ("GET", "POST") for path in paths)
    target.site.send_all(Request("GET", path) for path in paths)  # no credentials at all
    # A session cookie that is not one, and a session without the CSRF token.
    target.site.send("GET", f"{API}/campaigns/", headers={"Cookie": "sessionid=é; csrftoken="})
    target.page("POST", f"{API}/campaigns/{SLUG}/grading/", who="organiser")


def attack_unknown_paths(target: Target) -> None:
    paths = ["/api/", "/api", "/api/v1", "/api/v1/", "/api/v2/campaigns/", "/api/schema",
             "/api/docs/x", f"{API}/nope/", f"{API}/campaigns/{SLUG}/nope/",
             f"{API}/campaigns/%00/", f"{API}/campaigns/{SLUG}%00/runs/",
             f"{API}/campaigns/{quote('日本')}/", f"{API}/campaigns/{'s' * 3000}/",
             f"{API}/runs/abc/", f"{API}/runs/-1/", f"{API}/runs/0/", f"{API}/runs/{HUGE}/",
             f"{API}/runs/{PAST_BIGINT}/", f"{API}/judgments/{HUGE}/",
             f"{API}/testbank/{PAST_BIGINT}/", f"{API}/runs/{HUGE}/marked/",
             f"{API}/runs/{HUGE}/scores/", f"{API}/runs/{HUGE}/file/",
             f"{API}/judgments/{HUGE}/confirm/", f"{API}//campaigns//",
             f"{API}/campaigns/%2e%2e/%2e%2e/", f"{API}/campaigns/{SLUG}/exports/%00",
             f"{API}/campaigns/{SLUG}/exports/{'x' * 3000}", f"{API}/%ff%fe/",
             f"{API}/campaigns/{SLUG}/leaderboards/nope/publish/",
             f"{API}/campaigns/{SLUG}/runs", f"{API}/campaigns/{SLUG}/runs/bulk"]
    target.site.send_all(target.api(method, path, who=who)
                         for path in paths for method in METHODS for who in (None, "organiser"))


def known_api_paths(target: Target) -> list[str]:
    ids = target.ids
    campaign = f"{API}/campaigns/{SLUG}"
    return [
        f"{API}/auth/token/", f"{API}/campaigns/", f"{campaign}/", f"{campaign}/questions/",
        f"{campaign}/runs/", f"{campaign}/runs/bulk/", f"{campaign}/shared-pr-runs.zip",
        f"{campaign}/testbank/", f"{campaign}/testbank/generate/",
        f"{API}/testbank/{ids['bank_item']}/", f"{API}/runs/{ids['own_ac']}/",
        f"{API}/runs/{ids['own_ac']}/file/", f"{campaign}/grading/", f"{campaign}/judgments/",
        f"{API}/judgments/{ids['judgment']}/", f"{API}/judgments/{ids['judgment']}/confirm/",
        f"{API}/runs/{ids['own_ac']}/marked/", f"{campaign}/scoring/",
        f"{campaign}/leaderboards/", f"{campaign}/leaderboards/ac/publish/", f"{campaign}/qrels/",
        f"{campaign}/rubric-qrels/", f"{campaign}/exports/res.zip",
        f"{campaign}/exports/marked.zip", f"{campaign}/exports/leaderboards.tex",
        f"{campaign}/exports/graded.jsonl", f"{campaign}/reference/",
        f"{campaign}/meta-evaluation/", f"{campaign}/verification/grid/",
        f"{campaign}/verification/answers/", f"{campaign}/verification/testbank-gaps/",
        f"{API}/runs/{ids['own_ac']}/scores/", *DOCUMENTS,
    ]


def attack_every_method(target: Target) -> None:
    """Every known endpoint with every method and no body, as each persona."""
    target.site.send_all(target.api(method, path, who=who)
                         for path in known_api_paths(target) for method in METHODS
                         for who in (None, "own", "organiser"))


JUNK_QUERIES = ("shared=null", "current=%00", "qid=%00", "qid=" + quote("日本語"),
                "qid=" + "q" * 2000, "qid=%ED%A0%80", "qid=a&qid=b", "run=%00", "run=" + HUGE,
                "run=-1", "kind=%00", "label=%00", "edited=null", "doubtful=maybe", "page=-1",
                "page=" + HUGE, "page=%00", "track=%00", "track=" + HUGE, "status=%00",
                "all=%00", "docid=%00", "item=" + PAST_BIGINT, "%00=%00", "worker=%00",
                "relevant_level=" + HUGE, "n=" + HUGE, "grade=" + HUGE, "q=%00", "o=%00",
                "next=//evil.example/")


#: The junk a participant sends too (the organiser sends all of JUNK_QUERIES).
PARTICIPANTS_JUNK = ("shared=null", "qid=%00", "run=%00", "page=" + HUGE)


def junk_queries(paths: list[str]) -> Iterator[tuple[str, str]]:
    """(persona, path?query) pairs: every junk query from the organiser, who gets past
    every 404, and the commonest from a participant, who sees less."""
    for path in paths:
        yield from (("organiser", f"{path}?{query}") for query in JUNK_QUERIES)
        yield from (("own", f"{path}?{query}") for query in PARTICIPANTS_JUNK)


def attack_query_parameters(target: Target) -> None:
    # Not the OpenAPI document: it takes no parameters, and is a second's work to build.
    paths = [path for path in known_api_paths(target) if path not in DOCUMENTS]
    target.site.send_all(target.api("GET", query, who=who) for who, query in junk_queries(paths))


def attack_other_campaigns_ids(target: Target) -> None:
    """Eve (of another campaign) names the toy campaign's rows: 404, as a missing id."""
    ids = target.ids
    shapes = [("GET", "/runs/{}/"), ("GET", "/runs/{}/file/"), ("GET", "/runs/{}/marked/"),
              ("GET", "/runs/{}/scores/"), ("GET", "/judgments/{}/"),
              ("PATCH", "/judgments/{}/"), ("POST", "/judgments/{}/confirm/"),
              ("GET", "/testbank/{}/"), ("PATCH", "/testbank/{}/"),
              ("DELETE", "/testbank/{}/?note=x")]
    rows = {"/runs/": (ids["own_ac"], ids["own_pr"]), "/judgments/": (ids["judgment"],),
            "/testbank/": (ids["bank_item"],)}
    for method, shape in shapes:
        kind = next(prefix for prefix in rows if shape.startswith(prefix))
        for who in ("elsewhere", "outsider"):
            missing = target.send(method, API + shape.format(MISSING_ID), who=who)
            for row in rows[kind]:
                hidden = target.send(method, API + shape.format(row), who=who)
                target.expect(hidden, hidden.status == 404 and hidden.body == missing.body,
                              f"unlike a missing id ({missing.status} {missing.body[:80]!r})")
    # The pages answer the same way.
    for shape in ("/runs/{}/", "/runs/{}/download/", "/judgments/{}/",
                  f"/campaigns/{SLUG}/testbank/{{}}/"):
        missing = target.page("GET", shape.format(MISSING_ID), who="elsewhere")
        for row in (ids["own_ac"], ids["judgment"], ids["bank_item"]):
            hidden = target.page("GET", shape.format(row), who="elsewhere")
            if hidden.status != 200:
                target.expect(hidden, hidden.status == 404 and hidden.body == missing.body,
                              f"unlike a missing id ({missing.status})")


def page_paths(target: Target) -> list[str]:
    ids = target.ids
    campaign = f"/campaigns/{SLUG}"
    return [
        "/", "/accounts/login/", f"{campaign}/", f"{campaign}/runs/", f"{campaign}/team/",
        f"{campaign}/runs/upload/", f"{campaign}/results/", f"{campaign}/results/WASEDA-AC-1/",
        f"{campaign}/results/{'x' * 3000}/", f"{campaign}/dashboard/",
        f"{campaign}/judgments/", f"/judgments/{ids['judgment']}/", f"{campaign}/testbank/",
        f"{campaign}/testbank/{ids['bank_item']}/", f"{campaign}/tracks/dl/grid/",
        f"{campaign}/tracks/dl/verify/", f"{campaign}/tracks/dl/passage/",
        f"{campaign}/tracks/dl/missing-and-spurious/", f"{campaign}/tracks/nope/grid/",
        f"/runs/{ids['own_ac']}/", f"/runs/{ids['own_ac']}/download/", f"/runs/{HUGE}/",
        f"/judgments/{PAST_BIGINT}/", f"{campaign}/validations/{HUGE}/", "/nope/",
        "/campaigns/%00/", "/healthz", "/admin/", "/admin/campaign/campaign/",
        "/admin/auth/user/", "/static/nope.css",
    ]


def attack_pages(target: Target) -> None:
    missing = target.page("GET", "/no-such-page/")
    target.expect(missing, missing.status == 404 and b"URLconf" not in missing.body,
                  "not the production 404 page (is DEBUG on?)")
    paths = page_paths(target)
    target.site.send_all(target.browser("GET", path, who=who)
                         for path in paths for who in (None, "own", "organiser", "elsewhere"))
    target.site.send_all(target.browser("GET", query, who=who)
                         for who, query in junk_queries(paths))
    # No CSRF token: a 403 page; PUT: a 405 page.
    target.site.send_all(target.browser(method, path, who="organiser")
                         for path in paths for method in ("POST", "PUT"))
    # Forms posted with a CSRF token (the cookie's own secret) and junk fields.
    csrf = secrets.token_hex(16)
    for path, fields in ((f"/campaigns/{SLUG}/runs/upload/", {"description": "a\x00b"}),
                         ("/accounts/login/", {"username": "alice\x00", "password": "x"}),
                         ("/accounts/login/", {"username": "a" * 1_000_000, "password": "x"}),
                         (f"/judgments/{target.ids['judgment']}/", {"note": "\x00"}),
                         (f"/campaigns/{SLUG}/testbank/{target.ids['bank_item']}/",
                          {"text": "\x00", "note": "n" * 1_000_000})):
        body, kind = multipart({"csrfmiddlewaretoken": csrf, **fields},
                               {"file": ("WASEDA-AC-2", b"<D001>\nx\x00;1\n</D001>\n")})
        for who in ("own", "organiser"):
            target.page("POST", path, who=who, body=body, headers={
                "Content-Type": kind, "Cookie": f"csrftoken={csrf}; "
                f"{settings.SESSION_COOKIE_NAME}={target.sessions[who]}"})


def attack_password_guessing(target: Target) -> None:
    """Guesses at alice's password until the site says to wait: within the rates of each
    of gunicorn's processes (each counts on its own without a shared cache)."""
    rate = min(int(rate.split("/")[0]) for scope, rate in settings.THROTTLE_RATES.items()
               if scope.startswith("sign_in") and rate is not None)
    throttled: Answer | None = None
    for guess in range(WORKERS * rate + 1):
        body, headers = as_json({"username": "alice", "password": f"guess-{guess}"})
        answer = target.send("POST", f"{API}/auth/token/", body=body, headers=headers)
        if answer.status == 429:
            throttled = answer
            break
        target.expect(answer, answer.status == 400, "a wrong password that is not a 400")
    if throttled is None:
        target.promises.append(Offence("POST", f"{API}/auth/token/", 0, "",
                                       f"no 429 after {WORKERS * rate + 1} wrong passwords"))
        return
    wait = throttled.headers.get("retry-after", "")
    target.expect(throttled, wait.isdigit() and int(wait) > 0,
                  f"a 429 without a Retry-After in seconds ({wait!r})")


#: Requests gunicorn refuses itself, before Django: raw bytes, and the status each gets.
MALFORMED_HTTP = [
    (b"GET /api/v1/campaigns/ HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n", 400),
    (b"GET /api/v1/campaigns/ HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
     431),
    (b"GET /api/v1/campaigns/?" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"G\x00T /api/v1/campaigns/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /api/v1/campaigns/ HTTP/9.9\r\nHost: x\r\n\r\n", 400),
]


def attack_malformed_http(target: Target) -> None:
    """What gunicorn refuses before Django answers the API's JSON error all the same
    (config/gunicorn_errors.py); it was gunicorn's HTML page."""
    for raw, status in MALFORMED_HTTP:
        with socket.create_connection((target.site.host, target.site.port), timeout=30) as sock:
            sock.sendall(raw)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        first = head.split(b"\r\n")[0].decode("latin-1")
        what = raw[:40].decode("latin-1")
        got = int(first.split()[1]) if len(first.split()) > 1 else 0
        json_body = b"content-type: application/json" in head.lower()
        try:
            detail = json.loads(body)["detail"] if json_body else None
        except (ValueError, KeyError):
            detail = None
        if got != status or not detail:
            target.promises.append(Offence("RAW", what, got, "", f"expected a JSON {status}, "
                                           f"got {first!r} with {body[:80]!r}"))


ATTACKS: list[Callable[[Target], None]] = [
    attack_other_campaigns_ids,  # first: before other attacks change what exists
    attack_pr_files_while_open, attack_run_files, attack_bulk_zips, attack_json_fields,
    attack_huge_bodies, attack_content_types, attack_accept_headers, attack_tokens,
    attack_unknown_paths, attack_every_method, attack_query_parameters, attack_pages,
    attack_malformed_http,
    attack_password_guessing,  # last: it locks alice out
]


def test_no_attack_gets_a_5xx_or_an_api_answer_that_is_not_json(target: Target) -> None:
    for attack in ATTACKS:
        attack(target)

    broken = offences(target.site) + target.promises
    listing = "\n".join(str(item) for item in dict.fromkeys(broken))
    assert not broken, (f"{len(broken)} of {len(target.site.answers)} answers broke a "
                        f"promise:\n{listing}\n--- errors in gunicorn's log ---\n"
                        f"{target.site.server_errors()}")
    # The attacks reached the code behind the doors, not only the 401s and 404s.
    statuses = {answer.status for answer in target.site.answers}
    assert {200, 201, 207, 400, 401, 403, 404, 405, 413, 415, 429} <= statuses, statuses
