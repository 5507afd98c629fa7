"""Content negotiation where `?format=` wins over the Accept header.

DRF narrows the renderers to the asked format and then still requires the Accept header
to match one of them, so `?format=csv` from a client that sends `Accept:
application/json` on every request (most API client libraries do) was a 406. The query
parameter is the more specific wish, written into this one URL; Accept only chooses
when no format is named.
"""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

UNKNOWN_FORMAT = "No format {format!r} at this endpoint; it offers: {formats}."


class FormatParameterFirst(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer],
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        wanted = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        if not wanted:
            return super().select_renderer(request, renderers, format_suffix)
        renderers = list(renderers)
        matching = [renderer for renderer in renderers if renderer.format == wanted]
        if not matching:
            # DRF answers an unknown format with a bare 404; the endpoint does exist.
            offered = ", ".join(dict.fromkeys(str(renderer.format) for renderer in renderers))
            raise exceptions.NotAcceptable(UNKNOWN_FORMAT.format(format=wanted, formats=offered),
                                           available_renderers=renderers)
        return matching[0], str(matching[0].media_type)
