"""The service's REST API v1 as the client speaks it, over httpx2: an API error becomes
`ApiError` word for word, a failure on the way a `ClientError` that says what happened."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import IO, Any
from urllib.parse import quote

import httpx2

from evalctl import __version__
from evalctl.progress import CountingReader

API = "/api/v1"
#: How long a request may take: a connection, and an answer to an ordinary request.
CONNECT_SECONDS = 10.0
ANSWER_SECONDS = 60.0
#: An upload's answer comes once the server has validated the whole file (50 MB at most
#: by default, on a busy machine).
UPLOAD_SECONDS = 600.0

CANNOT_REACH = "cannot reach {site}: {reason}"
NO_ANSWER = "{site} did not answer within {seconds:.0f} s ({what})"
CONNECTION_FAILED = "the connection to {site} failed: {reason}"
NOT_THE_API = "HTTP {status} from {url}: not an answer of the evaluation service's API"
SIGN_IN_AGAIN = "the token was refused: sign in again with `evalctl login`"
RETRY_AFTER = "the server asks to wait {seconds} s before trying again (Retry-After)"


class ClientError(Exception):
    """What went wrong, in words for the user; `exit_code` is the command's."""

    def __init__(self, message: str, details: Sequence[str] = (), exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.details = list(details)
        self.exit_code = exit_code


def problem_line(item: Mapping[str, Any]) -> str:
    """One item of `errors` as the server words a problem: ``line 3, PassageRank: ...``."""
    line, field, message = item.get("line"), item.get("field") or "", item.get("message", "")
    if line:
        return f"line {line}, {field}: {message}"
    return f"{field}: {message}" if field else str(message)


class ApiError(ClientError):
    """An error answer of the API: its status, `detail` and `errors` as sent."""

    def __init__(self, status: int, detail: str, errors: Sequence[Mapping[str, Any]],
                 *, retry_after: str | None = None) -> None:
        details = [problem_line(item) for item in errors
                   if item.get("line") or item.get("message") != detail]
        if retry_after is not None:
            details.append(RETRY_AFTER.format(seconds=retry_after))
        if status == 401:
            details.append(SIGN_IN_AGAIN)
        super().__init__(f"{detail} (HTTP {status})", details)
        self.status = status
        self.detail = detail
        self.errors = list(errors)


def _error_of(response: httpx2.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "detail" not in body:
        detail = NOT_THE_API.format(status=response.status_code, url=response.url)
        return ApiError(response.status_code, detail, [])
    errors = body.get("errors")
    return ApiError(response.status_code, str(body["detail"]),
                    [item for item in errors or [] if isinstance(item, dict)],
                    retry_after=response.headers.get("Retry-After"))


def _answered_at(response: httpx2.Response) -> datetime | None:
    """When the site answered, by its own clock (the Date header), if it says."""
    try:
        moment = parsedate_to_datetime(response.headers.get("Date", ""))
    except (TypeError, ValueError, IndexError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Api:
    """One site of the service, with the user's token (None: anonymous)."""

    def __init__(self, site: str, token: str | None) -> None:
        headers = {"User-Agent": f"evalctl/{__version__}", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        self.site = site
        self._http = httpx2.Client(
            base_url=site + API, headers=headers,
            timeout=httpx2.Timeout(ANSWER_SECONDS, connect=CONNECT_SECONDS))

    def close(self) -> None:
        self._http.close()

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        return self._json(self._send("GET", path, params=params))

    def get_dated(self, path: str) -> tuple[Any, datetime | None]:
        """GET as `get`, with the site's clock at its answer (the Date header, to the
        second), or None without one: a deadline is the site's, not this machine's."""
        response = self._send("GET", path)
        return self._json(response), _answered_at(response)

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        return self._json(self._send("POST", path, json=body))

    def upload_run(self, slug: str, *, track: str, name: str, description: str,
                   file: IO[bytes], filename: str,
                   progress: Callable[[int], None]) -> Any:
        """POST a run (multipart: track, name, file, description), reporting the bytes
        sent through `progress`; the created run, or `ApiError` (a file that breaks the
        format rules: 400 with the run's validation report in `errors`)."""
        reader = CountingReader(file, progress)
        response = self._send(
            "POST", f"/campaigns/{quote(slug, safe='')}/runs/",
            data={"track": track, "name": name, "description": description},
            files={"file": (filename, reader, "application/octet-stream")},
            seconds=UPLOAD_SECONDS)
        return self._json(response)

    def download(self, path: str, target: IO[bytes]) -> None:
        """GET a file of the API into `target`, a chunk at a time."""
        try:
            with self._http.stream("GET", path, headers={"Accept": "*/*"}) as response:
                if response.is_error:
                    response.read()
                    raise _error_of(response)
                for chunk in response.iter_bytes():
                    target.write(chunk)
        except httpx2.TransportError as error:
            raise self._transport_error(error, "GET " + path, ANSWER_SECONDS) from None

    def _send(self, method: str, path: str, *, seconds: float = ANSWER_SECONDS,
              **options: Any) -> httpx2.Response:
        timeout = httpx2.Timeout(seconds, connect=CONNECT_SECONDS)
        try:
            response = self._http.request(method, path, timeout=timeout, **options)
        except httpx2.TransportError as error:
            raise self._transport_error(error, f"{method} {path}", seconds) from None
        if response.is_error:
            raise _error_of(response)
        return response

    def _json(self, response: httpx2.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise ClientError(NOT_THE_API.format(status=response.status_code,
                                                 url=response.url)) from None

    def _transport_error(self, error: httpx2.TransportError, what: str,
                         seconds: float) -> ClientError:
        reason = str(error) or type(error).__name__
        if isinstance(error, httpx2.TimeoutException):
            return ClientError(NO_ANSWER.format(site=self.site, seconds=seconds, what=what))
        if isinstance(error, httpx2.ConnectError):
            return ClientError(CANNOT_REACH.format(site=self.site, reason=reason))
        return ClientError(CONNECTION_FAILED.format(site=self.site, reason=reason))


def site_url(text: str) -> str:
    """The site's address as the client keeps it: ``http(s)://host[:port][/prefix]``,
    without a trailing slash or the API's own path (a user may paste either)."""
    url = text.strip().rstrip("/")
    if url.endswith(API):
        url = url[: -len(API)].rstrip("/")
    if not url.startswith(("http://", "https://")) or len(url.split("//", 1)[1]) == 0:
        raise ClientError(f"{text!r} is not a site address; expected http(s)://HOST[:PORT]")
    return url


def campaign_path(slug: str) -> str:
    """The API path of a campaign (a slug as typed may hold anything)."""
    return "/campaigns/" + quote(slug, safe="")


def call(api: Api, request: Callable[[Api], Any]) -> Any:
    try:
        return request(api)
    finally:
        api.close()
