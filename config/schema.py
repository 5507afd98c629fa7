"""The OpenAPI document's view (/api/schema/), built by one thread at a time.

drf-spectacular imports the targets of its extensions lazily, on the first document it
builds, and not thread-safely: one thread sets an extension's target to None (its package
is not installed) while another is still reading it as a dotted path. Two first requests
at once in one gunicorn process (four threads) made a 500. A lock per process puts them
one after the other; building the document takes a moment, and it is rarely asked for.
"""

from __future__ import annotations

import threading
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request

_building = threading.Lock()


class SchemaView(SpectacularAPIView):
    # Not in its own document, as drf-spectacular's view is not (SERVE_INCLUDE_SCHEMA).
    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponseBase:
        with _building:
            response: HttpResponseBase = super().get(request, *args, **kwargs)
            return response
