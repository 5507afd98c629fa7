"""The judge client's one HTTP seam: POST a JSON body, get the status, body and Retry-After,
through aiohttp or an httpx pool (docs/judging.md, "Slow judges and timeouts")."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import aiohttp
    import httpx2


class NoAnswer(Exception):
    """The server gave no HTTP answer: it timed out (`timed_out`), or the connection failed."""

    def __init__(self, message: str, *, timed_out: bool) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class HttpAnswer:
    """What the server answered: the status, the raw body, its Retry-After header if any."""

    status: int
    body: bytes
    retry_after: str | None = None


class Transport(Protocol):
    """POSTs JSON bodies to paths under one base URL; belongs to one event loop."""

    async def post(self, path: str, body: bytes) -> HttpAnswer:
        """The server's answer to `body` at `path` (relative to the base URL), or
        `NoAnswer`."""
        ...

    async def get(self, url: str) -> HttpAnswer:
        """The server's answer to a GET of `url` (absolute), or `NoAnswer`."""
        ...

    async def aclose(self) -> None:
        """Close the pool's connections."""
        ...


UNKNOWN_TRANSPORT = "unknown judge transport {name!r}: use one of {names}"
CONNECT_TIMED_OUT = "the connection to the judge's server timed out"
TRANSPORTS = ("aiohttp", "httpx")


@dataclass(frozen=True)
class TransportSettings:
    base_url: str  # including the API prefix, e.g. "http://127.0.0.1:8000/v1"
    api_key: str
    connect_timeout: float
    connections: int

    def url(self, path: str) -> str:
        return f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"

    @property
    def metrics_url(self) -> str:
        """Where the server's Prometheus counters are: beside its API prefix
        (llama.cpp's and vLLM's `/metrics`)."""
        root = self.base_url.rstrip("/")
        return f"{root.removesuffix('/v1')}/metrics"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json",
                "Accept": "application/json"}

    @property
    def proxy(self) -> str | None:
        """The proxy the environment names for the judge's host, if any (read once)."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        if not host or urllib.request.proxy_bypass(host):
            return None
        return urllib.request.getproxies().get(parts.scheme or "http")


def available_transports() -> list[str]:
    """The transports whose library is installed, cheapest first."""
    names = []
    for name, module in (("aiohttp", "aiohttp"), ("httpx", "httpx2")):
        try:
            __import__(module)
        except ImportError:
            continue
        names.append(name)
    return names


def make_transport(name: str, settings: TransportSettings) -> Transport:
    """The transport called `name` ("auto": the cheapest installed), not yet connected."""
    if name == "auto":
        name = available_transports()[0]
    if name == "aiohttp":
        return AiohttpTransport(settings)
    if name == "httpx":
        return HttpxTransport(settings)
    raise ValueError(UNKNOWN_TRANSPORT.format(name=name, names=", ".join(TRANSPORTS)))


class AiohttpTransport:
    """aiohttp's client session, opened on the first request (inside the event loop)."""

    def __init__(self, settings: TransportSettings) -> None:
        self.settings = settings
        self._proxy = settings.proxy
        self._session: aiohttp.ClientSession | None = None

    def _opened(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.settings.connections),
                timeout=aiohttp.ClientTimeout(total=None,
                                              sock_connect=self.settings.connect_timeout),
                headers=self.settings.headers, trust_env=False)
        return self._session

    async def post(self, path: str, body: bytes) -> HttpAnswer:
        return await self._request("POST", self.settings.url(path), body)

    async def get(self, url: str) -> HttpAnswer:
        return await self._request("GET", url, None)

    async def _request(self, method: str, url: str, body: bytes | None) -> HttpAnswer:
        import aiohttp

        session = self._opened()
        try:
            async with session.request(method, url, data=body, proxy=self._proxy) as response:
                return HttpAnswer(response.status, await response.read(),
                                  response.headers.get("Retry-After"))
        except TimeoutError as error:  # aiohttp's timeouts are TimeoutErrors
            raise NoAnswer(CONNECT_TIMED_OUT, timed_out=True) from error
        except aiohttp.ClientError as error:
            raise NoAnswer(_said(error), timed_out=False) from error

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class HttpxTransport:
    """A plain httpx connection pool."""

    def __init__(self, settings: TransportSettings) -> None:
        self.settings = settings
        self._client: httpx2.AsyncClient | None = None

    def _opened(self) -> httpx2.AsyncClient:
        import httpx2

        if self._client is None:
            connections = self.settings.connections
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(None, connect=self.settings.connect_timeout),
                headers=self.settings.headers,
                limits=httpx2.Limits(max_connections=connections,
                                     max_keepalive_connections=connections),
                proxy=self.settings.proxy, trust_env=False)
        return self._client

    async def post(self, path: str, body: bytes) -> HttpAnswer:
        return await self._request("POST", self.settings.url(path), body)

    async def get(self, url: str) -> HttpAnswer:
        return await self._request("GET", url, None)

    async def _request(self, method: str, url: str, body: bytes | None) -> HttpAnswer:
        import httpx2

        client = self._opened()
        try:
            response = await client.request(method, url, content=body)
        except httpx2.TimeoutException as error:
            raise NoAnswer(CONNECT_TIMED_OUT, timed_out=True) from error
        except httpx2.TransportError as error:
            raise NoAnswer(_said(error), timed_out=False) from error
        return HttpAnswer(response.status_code, response.content,
                          response.headers.get("retry-after"))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _said(error: BaseException) -> str:
    """An error's own words, or its type where it has none."""
    return str(error) or type(error).__name__

