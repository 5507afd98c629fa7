"""The OpenAPI document's view (/api/schema/), built by one thread at a time per process:
drf-spectacular's lazy imports are not thread-safe, and two first requests at once made a 500."""

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
