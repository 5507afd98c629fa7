"""Throttles on failed sign-ins (per user name, per client address) and the base that reads
its rate live; counts live in the default cache, which fails open when it cannot be
reached (docs/deployment.md, "Throttles and the cache")."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

#: The throttle scopes, keys of DEFAULT_THROTTLE_RATES.
SIGN_IN_USERNAME = "sign_in_username"
SIGN_IN_IP = "sign_in_ip"
NO_RATE = "No throttle rate for scope {scope!r}; set it in REST_FRAMEWORK's DEFAULT_THROTTLE_RATES."
#: Logged (once per request) when the cache does not answer.
CACHE_DOWN = "throttles not applied to %s %s: the cache does not answer (%s)"
#: What a cache that cannot be reached raises: redis-py's errors, or the socket's own.
CACHE_ERRORS = (RedisError, OSError)
#: The attribute marking a request whose dead cache has been logged already.
_CACHE_DOWN_LOGGED = "_throttle_cache_down_logged"
#: The detail of a 429 from the token endpoint (DRF appends when to try again).
TOO_MANY_FAILED_SIGN_INS = (
    "Too many failed sign-ins for this user name or from this address; wait before trying again."
)

# A web form's request or the API's: the throttles read the same fields of both.
AnyRequest = HttpRequest | Request
_T = TypeVar("_T")

logger = logging.getLogger(__name__)


def _fail_open(request: AnyRequest, use_cache: Callable[[], _T], fallback: _T) -> _T:
    """`use_cache()`, or `fallback` when the cache cannot be reached."""
    try:
        return use_cache()
    except CACHE_ERRORS as error:
        # Each request asks several throttles, each of them the cache more than once:
        # one line per request is enough to see the outage, and no flood.
        marked = request._request if isinstance(request, Request) else request
        if not getattr(marked, _CACHE_DOWN_LOGGED, False):
            setattr(marked, _CACHE_DOWN_LOGGED, True)
            logger.warning(CACHE_DOWN, request.method, request.path, error)
        return fallback


class LiveRateThrottle(SimpleRateThrottle):
    """A throttle that reads its rate when created, not when imported as DRF's does, so a
    changed setting is seen."""

    # Set by SimpleRateThrottle.__init__ from the rate; only read while there is one.
    num_requests: int
    duration: int

    def get_rate(self) -> str | None:
        rates: Mapping[str, Any] = api_settings.DEFAULT_THROTTLE_RATES
        if self.scope is None or self.scope not in rates:
            raise ImproperlyConfigured(NO_RATE.format(scope=self.scope))
        rate: str | None = rates[self.scope]
        return rate

    def allow_request(self, request: Any, view: Any) -> bool:
        return _fail_open(request, lambda: self._allow(request, view), True)

    def _allow(self, request: Any, view: Any) -> bool:
        """DRF's check, which counts every request; the sign-in throttles count otherwise."""
        return super().allow_request(request, view)

    def wait(self) -> float | None:
        """Seconds until the window has room for one more request: the moment the request that
        filled the last place leaves it (DRF's answer is None once a burst overshot the rate)."""
        if self.num_requests == 0:
            return float(self.duration)
        last_place = self.num_requests - 1  # the history is newest first
        if len(self.history) <= last_place:
            return None
        return max(1.0, self.duration - (self.now - self.history[last_place]))


class FailedSignInThrottle(LiveRateThrottle):
    """Counts failed sign-ins only, so the right password is never slowed: `allow_request`
    checks, the view calls `record_failure`. Two cache calls, not one atomic step: a burst of
    concurrent guesses may overshoot the rate by its size, and is stopped at the next check."""

    def get_cache_key(self, request: AnyRequest, view: APIView | None) -> str | None:
        raise NotImplementedError  # per user name or per address: the subclasses say

    def record_failure(self, request: AnyRequest) -> None:
        _fail_open(request, lambda: self._record_failure(request), None)

    def _allow(self, request: AnyRequest, view: APIView | None) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.history = self._recent_history(self.key)
        if len(self.history) >= self.num_requests:
            return self.throttle_failure()
        return True

    def _record_failure(self, request: AnyRequest) -> None:
        if self.rate is None:
            return
        key = self.get_cache_key(request, None)
        if key is None:
            return
        history = self._recent_history(key)
        history.insert(0, self.now)  # newest first, as SimpleRateThrottle keeps it
        self.cache.set(key, history, self.duration)

    def _recent_history(self, key: str) -> list[float]:
        self.now = self.timer()
        history: list[float] = self.cache.get(key, [])
        return [moment for moment in history if moment > self.now - self.duration]


class SignInPerUsernameThrottle(FailedSignInThrottle):
    """Failed sign-ins naming one user name, from anywhere."""

    scope = SIGN_IN_USERNAME

    def get_cache_key(self, request: AnyRequest, view: APIView | None) -> str | None:
        username = submitted_username(request)
        if not username:
            return None
        # Hashed: a user name may hold spaces or any character, which some caches refuse.
        ident = hashlib.sha256(username.casefold().encode("utf-8", "surrogatepass")).hexdigest()
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def forget(self, request: AnyRequest) -> None:
        """After a successful sign-in, the user's earlier typos no longer count."""
        key = self.get_cache_key(request, None)
        if key is not None:
            _fail_open(request, lambda: self.cache.delete(key), None)


class SignInPerIpThrottle(FailedSignInThrottle):
    """Failed sign-ins from one client address, whatever user names they try; never reset by a
    success, or a guesser could wipe the count by signing in to an account of their own."""

    scope = SIGN_IN_IP

    def get_cache_key(self, request: AnyRequest, view: APIView | None) -> str | None:
        # REST_FRAMEWORK's NUM_PROXIES says how far to trust X-Forwarded-For.
        # DRF reads only request.META, which a web form's request has as well.
        ident = self.get_ident(request)  # type: ignore[arg-type]
        return self.cache_format % {"scope": self.scope, "ident": ident}


def submitted_username(request: AnyRequest) -> str | None:
    """The user name a sign-in request names (form field or JSON member), if any."""
    data = request.data if isinstance(request, Request) else request.POST
    username = data.get("username") if isinstance(data, Mapping) else None
    return username.strip() if isinstance(username, str) and username.strip() else None


def sign_in_throttles() -> list[FailedSignInThrottle]:
    return [SignInPerUsernameThrottle(), SignInPerIpThrottle()]


def sign_in_wait(request: AnyRequest) -> float | None:
    """Seconds before this request may try to sign in again; None if it may now."""
    waits = [throttle.wait() or 0.0 for throttle in sign_in_throttles()
             if not throttle.allow_request(request, None)]
    return max(waits) if waits else None


def sign_in_failed(request: AnyRequest) -> None:
    for throttle in sign_in_throttles():
        throttle.record_failure(request)


def sign_in_succeeded(request: AnyRequest) -> None:
    SignInPerUsernameThrottle().forget(request)
