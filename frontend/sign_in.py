"""The sign-in page: Django's LoginView, failed sign-ins throttled with the API token
endpoint's throttles, rates and counts (infrastructure.throttles), so that a guesser gains
nothing by moving from one to the other."""

from __future__ import annotations

import math

from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from infrastructure.throttles import sign_in_failed, sign_in_succeeded, sign_in_wait

TOO_MANY_FAILED_SIGN_INS = (
    "Too many failed sign-ins for this user name or from your address. "
    "Try again in {minutes} minute{plural}."
)


class SignInView(LoginView):
    throttled_template_name = "registration/sign_in_throttled.html"

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        # Checked before the form is: a throttled guess never reaches the password hasher.
        wait = sign_in_wait(request)
        if wait is not None:
            return self._throttled(wait)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        sign_in_succeeded(self.request)
        return super().form_valid(form)

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        sign_in_failed(self.request)
        return super().form_invalid(form)

    def _throttled(self, wait: float) -> HttpResponse:
        seconds = math.ceil(wait)
        minutes = math.ceil(seconds / 60)
        message = TOO_MANY_FAILED_SIGN_INS.format(minutes=minutes,
                                                  plural="" if minutes == 1 else "s")
        response = render(self.request, self.throttled_template_name,
                          {"message": message, "next": self.get_redirect_url()}, status=429)
        response["Retry-After"] = str(seconds)
        return response
