"""API keys sent as ``Authorization: Token <key>`` or ``Authorization: Bearer <key>``: DRF
knows only ``Token``, and many HTTP clients and OpenAPI tools send only ``Bearer``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.authtoken.models import Token
from rest_framework.request import Request

#: The keywords accepted before the key, compared without regard to case (as DRF does).
KEYWORDS = ("Token", "Bearer")
NO_KEY = "Invalid {keyword} header: no key after {keyword!r}."
KEY_WITH_SPACES = "Invalid {keyword} header: the key should not contain spaces."
KEY_NOT_TEXT = "Invalid {keyword} header: the key should be plain ASCII text."


class TokenOrBearerAuthentication(TokenAuthentication):
    """TokenAuthentication that also takes `Bearer` as its keyword."""

    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, Token] | None:
        parts = get_authorization_header(request).split()
        keyword = self._keyword(parts)
        if keyword is None:
            return None  # another scheme (or none): left to the next authenticator
        if len(parts) == 1:
            raise exceptions.AuthenticationFailed(NO_KEY.format(keyword=keyword))
        if len(parts) > 2:
            raise exceptions.AuthenticationFailed(KEY_WITH_SPACES.format(keyword=keyword))
        try:
            key = parts[1].decode("ascii")
        except UnicodeError:
            raise exceptions.AuthenticationFailed(KEY_NOT_TEXT.format(keyword=keyword)) from None
        user_and_token: tuple[AbstractBaseUser, Token] = self.authenticate_credentials(key)
        return user_and_token

    def authenticate_header(self, request: Request) -> str:
        # The 401's WWW-Authenticate names the scheme the caller used, Token otherwise.
        return self._keyword(get_authorization_header(request).split()) or KEYWORDS[0]

    @staticmethod
    def _keyword(parts: list[bytes]) -> str | None:
        if not parts:
            return None
        sent = parts[0].lower()
        return next((k for k in KEYWORDS if k.lower().encode() == sent), None)


class TokenOrBearerScheme(OpenApiAuthenticationExtension):
    """Both ways of sending the key, as two security schemes of the OpenAPI document."""

    target_class = TokenOrBearerAuthentication
    name = ["tokenAuth", "bearerAuth"]

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list[Any]]]:
        # Two requirements, either one enough; one requirement naming both would ask for both.
        return [{name: []} for name in self.name]

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, str]]:
        return [
            build_bearer_security_scheme_object(header_name="Authorization",
                                                token_prefix="Token"),
            build_bearer_security_scheme_object(header_name="Authorization",
                                                token_prefix="Bearer"),
        ]
