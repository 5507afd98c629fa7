"""The site as production serves it, on loopback: gunicorn with deploy/gunicorn.conf.py
running config.wsgi with DEBUG off, on the test run's database, spoken to over HTTP.

`serving` starts it on a socket of ours bound to 127.0.0.1 (gunicorn's ``fd://``), so a
request sent before the workers have booted waits in the socket's queue instead of being
refused: no polling for readiness. `LiveSite.send` sends one request as written (any
method, any path, query and header, raw bytes; `send_all` several at once) and keeps
every answer, so that a test can then list those that break the API's promises.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import REPO, live_processes

GUNICORN_CONF = REPO / "deploy" / "gunicorn.conf.py"
#: The start of a record of the site's log (config/settings.py, LOGGING) or gunicorn's.
_RECORD = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\[\d{4}-\d\d-\d\d )")
#: The production defaults (deploy/gunicorn.conf.py): two processes of four threads.
WORKERS = 2
THREADS = 4
#: How long one answer may take: a 50 MB upload validated on a busy 2-core machine.
ANSWER_SECONDS = 120
#: SIGTERM until gunicorn and its workers have gone, before SIGKILL.
STOP_SECONDS = 30
#: Variables of the test run's environment that would point the site at shared services
#: or at someone else's settings; the site gets its own (see `site_environment`).
NOT_PASSED_ON = ("AWS_STORAGE_BUCKET_NAME", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND",
                 "DEBUG", "GUNICORN_WORKERS", "GUNICORN_THREADS", "GUNICORN_BIND",
                 "MEDIA_ROOT", "VAR_DIR", "SECURE_SSL_REDIRECT", "BEHIND_HTTPS_PROXY",
                 "ALLOWED_HOSTS")


def site_environment(base: Mapping[str, str], *, database_url: str, var_dir: Path,
                     media: Path, secret_key: str) -> dict[str, str]:
    """What the site's processes run with: the test database, the test's media folder
    (the runs the test uploaded in-process are there), the test process's secret key (so
    a session it signed in is valid on the site), and everything else under `var_dir`:
    the task queue on the embedded broker, which no worker reads (nothing the attacks
    set off is ever carried out)."""
    env = {name: value for name, value in base.items() if name not in NOT_PASSED_ON}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", DATABASE_URL=database_url,
               VAR_DIR=str(var_dir), MEDIA_ROOT=str(media), SECRET_KEY=secret_key,
               DEBUG="false", GUNICORN_WORKERS=str(WORKERS),
               GUNICORN_THREADS=str(THREADS), GUNICORN_ACCESSLOG="-",
               PYTHONUNBUFFERED="1")
    return env


@dataclass(frozen=True)
class Answer:
    """One request as sent and what came back."""

    method: str
    target: str  # path and query, as sent
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes
    asked: dict[str, str]  # the request's own headers

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return self.content_type.split(";")[0].strip().lower()

    def is_json(self) -> bool:
        """JSON by its header and by its body (a HEAD has none to read)."""
        if self.media_type != "application/json":
            return False
        if self.method == "HEAD":
            return True
        try:
            json.loads(self.body)
        except ValueError:
            return False
        return True

    def json(self) -> Any:
        return json.loads(self.body)

    def where(self) -> tuple[str, str, int, str]:
        """(method, path, status, content type): how a failure names the answer."""
        shown = self.target if len(self.target) <= 120 else self.target[:117] + "..."
        return self.method, shown, self.status, self.content_type


@dataclass(frozen=True)
class Request:
    """A request to send later, with others (`LiveSite.send_all`)."""

    method: str
    target: str
    body: bytes | None = None
    headers: Mapping[str, str] | None = None
    token: str | None = None


@dataclass
class LiveSite:
    host: str
    port: int
    log: Path
    answers: list[Answer] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def send(self, method: str, target: str, *, body: bytes | None = None,
             headers: Mapping[str, str] | None = None, token: str | None = None) -> Answer:
        """One request as written (the target is sent without any quoting of ours)."""
        asked = dict(headers or {})
        if token is not None:
            asked.setdefault("Authorization", f"Token {token}")
        connection = http.client.HTTPConnection(self.host, self.port, timeout=ANSWER_SECONDS)
        try:
            connection.putrequest(method, target, skip_accept_encoding=True)
            for name, value in asked.items():
                connection.putheader(name, value)
            if body is not None:
                connection.putheader("Content-Length", str(len(body)))
            # The site may answer before reading the whole body (a 413, say) and close the
            # connection: the answer is still there to read, as HTTP clients (urllib3,
            # httpx) read it.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                connection.endheaders(body)
            response = connection.getresponse()
            answer = Answer(method=method, target=target, status=response.status,
                            headers={k.lower(): v for k, v in response.getheaders()},
                            body=response.read(), asked=asked)
        finally:
            connection.close()
        self.answers.append(answer)
        return answer

    def send_all(self, requests: Iterable[Request]) -> list[Answer]:
        """Requests whose order does not matter, several at a time (as many as gunicorn
        has threads, so that its processes are busy while this one reads)."""
        with ThreadPoolExecutor(max_workers=WORKERS * THREADS) as pool:
            return list(pool.map(self.send_request, requests))

    def send_request(self, request: Request) -> Answer:
        return self.send(request.method, request.target, body=request.body,
                         headers=request.headers, token=request.token)

    def server_errors(self, most: int = 20_000) -> str:
        """The ERROR records of gunicorn's log (Django's 500s with their tracebacks), at
        most `most` characters of them."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        records: list[str] = []
        within = False
        for line in text.splitlines():
            # A record starts with its time ("2026-11-24 05:38:07,125 ERROR ..."), an access
            # log line with the client's address; a traceback's lines with neither.
            starts = _RECORD.match(line) is not None or line.startswith("127.0.0.1 ")
            if starts:
                within = " ERROR " in line
            if within:
                records.append(line)
        return "\n".join(records)[:most]


@contextlib.contextmanager
def serving(env: dict[str, str], *, log: Path) -> Iterator[LiveSite]:
    """gunicorn serving the site on a fresh port of 127.0.0.1, stopped on the way out
    (its whole process group, whatever happened in between)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    fd = listener.fileno()
    with log.open("w", encoding="utf-8") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application",
             "-c", str(GUNICORN_CONF), "--bind", f"fd://{fd}"],
            cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT,
            pass_fds=(fd,), start_new_session=True)
    # Only gunicorn holds the socket now: should it die, requests are refused, not queued.
    listener.close()
    site = LiveSite(host="127.0.0.1", port=port, log=log)
    try:
        yield site
    finally:
        stop(process)


def stop(process: subprocess.Popen[Any]) -> None:
    """SIGTERM to gunicorn's process group (the master and its workers), then SIGKILL to
    whatever of it is left."""
    group = process.pid  # start_new_session: the master leads its own group
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, sig)
        deadline = time.monotonic() + STOP_SECONDS
        while live_processes(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not live_processes(group):
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_SECONDS)
