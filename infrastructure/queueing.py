"""Handing work to the Celery workers from a request; when the queue does not answer,
`QueueUnavailable` names the work not queued and how to ask again, while what the request
saved stays saved (docs/deployment.md, "When the task queue is down")."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from celery import current_app
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from kombu.exceptions import OperationalError
from rest_framework import status
from rest_framework.exceptions import APIException

QUEUE_DOWN = (
    "The task queue does not answer, so {work} could not be queued; anything else this "
    "request changed is saved. {retry}"
)
#: Logged with the error when a send fails: the answer itself does not name the server.
NOT_QUEUED = "%s not queued: %r"

logger = logging.getLogger(__name__)


class QueueUnavailable(APIException):
    """The broker or the result store did not answer: `work` was not queued."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "queue_unavailable"

    def __init__(self, *, work: str, retry: str) -> None:
        super().__init__(QUEUE_DOWN.format(work=work, retry=retry))


class TaskSend(partial[object]):
    """A task's `apply_async` or `delay` with its arguments bound, which raises
    `QueueUnavailable` when the queue does not answer. A partial still, so a test can
    read which task it sends, and with what."""

    #: What the task does ("the scoring of the campaign") and how to ask again: both
    #: end up in the user's answer when the queue does not answer.
    work: str
    retry: str

    def __call__(self, /, *args: Any, **kwargs: Any) -> object:
        try:
            return super().__call__(*args, **kwargs)
        except Exception as error:
            if not _queue_is_down(error):
                raise
            logger.warning(NOT_QUEUED, self.work, error)
            raise QueueUnavailable(work=self.work, retry=self.retry) from error


def task_send(send: Callable[..., object], /, *args: Any, work: str, retry: str,
              **options: Any) -> TaskSend:
    """`send(*args, **options)`, to be called now or on commit (see TaskSend)."""
    bound = TaskSend(send, *args, **options)
    bound.work, bound.retry = work, retry
    return bound


def queue_task(send: Callable[..., object], /, *args: Any, work: str, retry: str,
               **options: Any) -> None:
    """Send a task now: `send(*args, **options)`; `QueueUnavailable` if it cannot be."""
    task_send(send, *args, work=work, retry=retry, **options)()


def queue_on_commit(send: Callable[..., object], /, *args: Any, work: str, retry: str,
                    **options: Any) -> None:
    """Send a task once the current transaction commits (at once outside of one), so a worker
    never looks for rows not yet there; `QueueUnavailable` is then raised at the commit."""
    transaction.on_commit(task_send(send, *args, work=work, retry=retry, **options))


def _queue_is_down(error: Exception) -> bool:
    if isinstance(error, OperationalError):
        return True  # kombu's word for a broker it cannot reach
    # The Redis result store: after its retries Celery raises a RuntimeError caused by
    # the connection error (other result stores have no such errors).
    # The project's Celery app (the current one once Django has loaded its settings).
    result_store_errors = getattr(current_app.backend, "connection_errors", ())
    return isinstance(error, RuntimeError) and isinstance(error.__cause__, result_store_errors)


class QueueUnavailableMiddleware:
    """On a page, work not queued is an error message on the page the user came from; without
    one of this site's pages to go back to, a plain 503 with the same words."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest,
                          exception: Exception) -> HttpResponseBase | None:
        if not isinstance(exception, QueueUnavailable):
            return None
        detail = str(exception.detail)
        back = _page_came_from(request)
        if back is None:
            return HttpResponse(detail, status=exception.status_code,
                                content_type="text/plain; charset=utf-8")
        messages.error(request, detail)
        return HttpResponseRedirect(back)


def _page_came_from(request: HttpRequest) -> str | None:
    """The path of the page on this site that sent the request, if it says."""
    referer = request.headers.get("Referer", "")
    if not referer or not url_has_allowed_host_and_scheme(
            referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return None
    parts = urlsplit(referer)
    return parts.path + (f"?{parts.query}" if parts.query else "")
