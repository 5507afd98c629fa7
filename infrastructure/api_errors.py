"""The API's one error shape, ``{"detail": str, "errors": [{"field", "message"}]}`` (plus
``line`` for a file), whatever shape DRF raised (docs/api.md, "Conventions")."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import exception_handler

VALIDATION_FAILED = "The request is not valid; see errors."


def flatten_errors(data: Any, field: str = "") -> list[dict[str, Any]]:
    """Turn DRF's nested error data into a flat list of {field, message} items."""
    if isinstance(data, dict):
        items: list[dict[str, Any]] = []
        for key, value in data.items():
            name = "" if key in ("non_field_errors", "detail") else str(key)
            items += flatten_errors(value, f"{field}.{name}" if field and name else field or name)
        return items
    if isinstance(data, list):
        return [item for value in data for item in flatten_errors(value, field)]
    return [{"field": field, "message": str(data)}]


def error_body(detail: str) -> dict[str, Any]:
    """The shape of an error that concerns the whole request rather than one field."""
    return {"detail": detail, "errors": [{"field": "", "message": detail}]}


def error_shape(data: Any, *, invalid_input: bool = False) -> dict[str, Any]:
    """DRF's error data (`invalid_input`: of a ValidationError) in the API's shape."""
    if isinstance(data, dict) and set(data) >= {"detail", "errors"}:
        return data  # already in our shape (raised by our own views)
    errors = flatten_errors(data)
    if invalid_input:
        detail = VALIDATION_FAILED if len(errors) != 1 else errors[0]["message"]
    elif isinstance(data, dict) and "detail" in data:
        detail = str(data["detail"])
    else:
        detail = "; ".join(item["message"] for item in errors)
    return {"detail": detail, "errors": errors}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = exception_handler(exc, context)
    if response is None:
        return None  # not an API error: a real bug, let Django report it
    response.data = error_shape(
        response.data, invalid_input=isinstance(exc, exceptions.ValidationError))
    return response


def authenticated_user(request: Request) -> User:
    """The signed-in user of a view that requires authentication."""
    user = request.user
    if not isinstance(user, User):
        raise exceptions.NotAuthenticated()
    return user


# Exempt: an unknown path changes nothing, and its answer is a 404 whoever asks; under
# Django's CSRF check a POST here from a signed-in browser got an HTML 403 instead.
@csrf_exempt
def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """404 for unknown /api/ paths, in the API's shape rather than an HTML page."""
    return JsonResponse(
        {"detail": f"No API endpoint at {request.path}.", "errors": []},
        status=status.HTTP_404_NOT_FOUND,
    )
