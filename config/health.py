"""`/healthz`: a cheap public database check for anyone, the deep checks (broker, storage,
a worker with ``?worker=1``) for the health token, organisers and staff; 200 when all pass,
503 naming those that fail (docs/deployment.md, "Health checks")."""

from __future__ import annotations

import hmac
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from campaign.models import Membership, Role
from config.celery import app as celery_app
from config.celery import ping
from infrastructure.query_params import parse_flag

BROKER_FOLDER_MISSING = "broker folder {folder} is missing or not writable"
WORKER_SILENT = "no worker answered within {timeout} s"
ALL_PASSED = "all checks passed"
ALIVE = "the database answers; the deep checks need the health token or an organiser"
FAILING = "failing: {names}"
HEALTH_TOKEN_HEADER = "X-Health-Token"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    detail: str
    seconds: float


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return connection.vendor


def check_broker() -> str:
    url = celery_app.conf.broker_url or ""
    if url.startswith("filesystem://"):
        # The filesystem transport "connects" to anything; what matters is the folder.
        folder = settings.CELERY_BROKER_DIR
        probe = folder / f".healthz-{uuid.uuid4().hex}"
        try:
            probe.write_bytes(b"")
            probe.unlink()
        except OSError:
            raise RuntimeError(BROKER_FOLDER_MISSING.format(folder=folder)) from None
        return "filesystem"
    timeout = settings.HEALTH_CHECK_TIMEOUT
    with celery_app.connection_for_write(
        transport_options={"socket_connect_timeout": timeout, "socket_timeout": timeout}
    ) as conn:
        conn.ensure_connection(max_retries=1, timeout=int(timeout) or 1)
        _ = conn.default_channel  # opens a channel: a real round trip to the server
        return str(conn.transport_cls)


def check_storage() -> str:
    # A write and a delete: what submissions need, on local disk or S3 alike.
    storage = storages["default"]
    name = storage.save(f"healthz/{uuid.uuid4().hex}.txt", ContentFile(b"ok"))
    storage.delete(name)
    return type(storage).__name__


def check_worker() -> str:
    timeout = settings.HEALTH_CHECK_TIMEOUT
    try:
        answer = ping.apply_async(expires=timeout).get(timeout=timeout)
    except Exception:
        raise RuntimeError(WORKER_SILENT.format(timeout=timeout)) from None
    return str(answer)


def _run(name: str, check: Callable[[], str]) -> CheckResult:
    started = time.perf_counter()
    try:
        detail = check()
        ok = True
    except Exception as exc:  # a health check reports failures, it never raises
        logger.warning("health check %s failed", name, exc_info=True)
        detail, ok = f"{type(exc).__name__}: {exc}", False
    return CheckResult(ok=ok, detail=detail, seconds=round(time.perf_counter() - started, 4))


def may_see_deep_checks(request: HttpRequest) -> bool:
    """The health token in its header, or a signed-in organiser or staff member."""
    token = settings.HEALTH_TOKEN
    sent = request.headers.get(HEALTH_TOKEN_HEADER, "")
    # Compared in constant time: the token is a password.
    if token and sent and hmac.compare_digest(sent.encode(), token.encode()):
        return True
    user = request.user
    if not user.is_authenticated:
        return False
    return user.is_staff or Membership.objects.filter(user=user, role=Role.ORGANISER).exists()


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with_worker = parse_flag(request.GET.get("worker"))
    except ValueError as bad:
        return JsonResponse({"detail": f"worker: {bad}",
                             "errors": [{"field": "worker", "message": str(bad)}]}, status=400)
    if not may_see_deep_checks(request):
        return _liveness()
    checks: dict[str, Callable[[], str]] = {
        "database": check_database,
        "broker": check_broker,
        "storage": check_storage,
    }
    if with_worker:
        checks["worker"] = check_worker
    results = {name: _run(name, check) for name, check in checks.items()}
    failing = [name for name, result in results.items() if not result.ok]
    body = {
        "status": "ok" if not failing else "unavailable",
        "detail": ALL_PASSED if not failing else FAILING.format(names=", ".join(failing)),
        "checks": {
            name: {"ok": r.ok, "detail": r.detail, "seconds": r.seconds}
            for name, r in results.items()
        },
    }
    return JsonResponse(body, status=200 if not failing else 503)


def _liveness() -> JsonResponse:
    """The public answer: the database answers or not, and nothing more."""
    ok = _run("database", check_database).ok
    body = {
        "status": "ok" if ok else "unavailable",
        "detail": ALIVE if ok else FAILING.format(names="database"),
        "checks": {"database": {"ok": ok}},
    }
    return JsonResponse(body, status=200 if ok else 503)
