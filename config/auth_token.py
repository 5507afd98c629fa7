"""POST /api/v1/auth/token/: DRF's token view, throttled on failed sign-ins."""

from __future__ import annotations

from typing import Any, NoReturn

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response

from campaign.api import error_responses
from infrastructure.throttles import (
    TOO_MANY_FAILED_SIGN_INS,
    SignInPerIpThrottle,
    SignInPerUsernameThrottle,
    sign_in_failed,
    sign_in_succeeded,
)


class ThrottledObtainAuthToken(ObtainAuthToken):
    """The API token of a user name and password; past the failed-sign-in rates, every
    attempt is a 429 until Retry-After, the right password too (docs/deployment.md,
    "Throttles and the cache")."""

    # DRF checks the throttles before the view runs: a throttled guess never reaches the
    # password hasher. Only failures are counted (infrastructure.throttles).
    throttle_classes = [SignInPerUsernameThrottle, SignInPerIpThrottle]
    # As ObtainAuthToken's empty tuple, but the OpenAPI document then says so.
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=AuthTokenSerializer,
        responses={200: AuthTokenSerializer, **error_responses(413, 415, described={
            400: "a field missing, a body that does not parse, or a wrong user name or "
                 "password (one answer for a wrong name and a wrong password)",
            # A sign-in sends no token; one sent anyway is checked before anything else.
            401: "an Authorization header with a token that is not valid: send none to "
                 "sign in",
            429: "too many failed sign-ins for this user name or from this address: wait "
                 "as long as Retry-After says"})},
        summary="A token for a user name and password",
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            response = super().post(request, *args, **kwargs)
        except exceptions.ValidationError:
            sign_in_failed(request)
            raise
        sign_in_succeeded(request)
        return response

    def throttled(self, request: Request, wait: float | None) -> NoReturn:
        raise exceptions.Throttled(wait, detail=TOO_MANY_FAILED_SIGN_INS)
