"""Every error under /api/ in the API's JSON shape, whatever raised it (Django's own
refusals, CSRF, unknown paths, a 500), and redirects there as JSON with their Location;
first in MIDDLEWARE."""

from __future__ import annotations

import logging
from collections.abc import Callable
from http import HTTPStatus

from django.conf import settings
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.http.response import HttpResponseRedirectBase
from rest_framework.response import Response

from infrastructure.api_errors import error_body, error_shape, json_not_found

API_PREFIX = "/api/"
REQUEST_TOO_LARGE = (
    "The request body is larger than the {limit} bytes accepted outside of uploaded files "
    "(DATA_UPLOAD_MAX_MEMORY_SIZE)."
)
BAD_REQUEST = "The request was refused before reaching the API: {reason}"
SUSPICIOUS = "it looked unsafe (the server's log says more)."
FORBIDDEN = (
    "Forbidden before reaching the API (a failed CSRF check, for instance); API clients "
    "should send `Authorization: Token <key>` rather than a session cookie."
)
METHOD_NOT_ALLOWED = "Method {method} is not allowed at {path}."
SERVER_ERROR = "Internal server error; it has been logged."
OTHER_ERROR = "{status} {phrase}."
REDIRECTED = "The address of this resource is {location}; send the request there."
#: Headers of the replaced response that still hold for the JSON one.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Vary")


class ApiErrorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if not is_api(request) or _is_json(response):
            return response
        if response.status_code >= HTTPStatus.BAD_REQUEST:
            return _as_json(request, response)
        if isinstance(response, HttpResponseRedirectBase):
            return _redirect_as_json(response)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> JsonResponse | None:
        """A request Django refuses while a view reads it (a body too large, too many
        fields): Django would log a traceback for what is the client's mistake."""
        if not is_api(request) or not isinstance(exception, SuspiciousOperation):
            return None  # a real bug: Django logs it, and __call__ shapes the 500
        # Still reported where Django reports it, as one line.
        logging.getLogger(f"django.security.{type(exception).__name__}").warning(
            "%s: %s", exception, request.path)
        if isinstance(exception, RequestDataTooBig):
            detail = REQUEST_TOO_LARGE.format(limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
            return _json(detail, HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        # Django's words on the request's own fields are safe to echo; others (a file
        # path outside the storage, say) may name the server's folders.
        reason = exception if isinstance(exception, TooManyFieldsSent | TooManyFilesSent) \
            else SUSPICIOUS
        return _json(BAD_REQUEST.format(reason=reason), HTTPStatus.BAD_REQUEST)


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _is_json(response: HttpResponseBase) -> bool:
    content_type = response.get("Content-Type", "").split(";")[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")


def _as_json(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    status = response.status_code
    if isinstance(response, Response) and response.data is not None:
        # A DRF error rendered as HTML (the browsable API): its data is already shaped.
        shaped = JsonResponse(error_shape(response.data), status=status)
    elif status == HTTPStatus.NOT_FOUND:
        shaped = json_not_found(request)
    else:
        shaped = _json(_detail(request, response), status)
    return _carry_over(response, shaped)


def _redirect_as_json(response: HttpResponseRedirectBase) -> HttpResponseBase:
    location = response["Location"]
    shaped = JsonResponse({"detail": REDIRECTED.format(location=location), "errors": []},
                          status=response.status_code)
    shaped["Location"] = location
    return _carry_over(response, shaped)


def _carry_over(response: HttpResponseBase, shaped: JsonResponse) -> JsonResponse:
    """`shaped` with the headers and cookies of `response` that still hold for it."""
    for header in KEPT_HEADERS:
        if header in response:
            shaped[header] = response[header]
    shaped.cookies = response.cookies
    return shaped


def _detail(request: HttpRequest, response: HttpResponseBase) -> str:
    status = response.status_code
    if status == HTTPStatus.BAD_REQUEST:
        return BAD_REQUEST.format(reason="a bad host name, header or body.")
    if status == HTTPStatus.FORBIDDEN:
        return FORBIDDEN
    if status == HTTPStatus.METHOD_NOT_ALLOWED:
        return METHOD_NOT_ALLOWED.format(method=request.method, path=request.path)
    if status == HTTPStatus.INTERNAL_SERVER_ERROR:
        return SERVER_ERROR
    return OTHER_ERROR.format(status=status, phrase=response.reason_phrase)


def _json(detail: str, status: int) -> JsonResponse:
    return JsonResponse(error_body(detail), status=status)
