"""Content negotiation where ``?format=`` wins over the Accept header, and JSON bodies
Python cannot hold (nested too deep, lone surrogates) are a 400, not a 500 (docs/api.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import IO, Any

from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser, JSONParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

UNKNOWN_FORMAT = "No format {format!r} at this endpoint; it offers: {formats}."
JSON_TOO_DEEP = "JSON parse error - the body is nested too deeply to read."
JSON_LONE_SURROGATE = (
    "JSON parse error - a string holds a lone surrogate (\\u{code:04x}), which is no "
    "character: send text that is valid Unicode."
)
#: The code points of UTF-16 surrogates, which are not characters on their own.
_SURROGATES = range(0xD800, 0xE000)


class SoundJSONParser(JSONParser):
    """DRF's JSON parser, with a 400 for what Python's json module cannot hold."""

    def parse(self, stream: IO[Any], media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(JSON_TOO_DEEP) from None
        surrogate = _lone_surrogate(data)
        if surrogate is not None:
            raise exceptions.ParseError(JSON_LONE_SURROGATE.format(code=surrogate))
        return data


def _lone_surrogate(data: Any) -> int | None:
    """The first lone surrogate in the strings (keys too) of parsed JSON, or None; walked
    without recursion, as the data may be nested nearly as deep as the parser allows."""
    pending = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            # Fast path: UTF-8 refuses exactly the surrogates.
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return next(ord(c) for c in value if ord(c) in _SURROGATES)
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return None


class FormatParameterFirst(DefaultContentNegotiation):
    def select_parser(self, request: Request,
                      parsers: Iterable[BaseParser]) -> BaseParser | None:
        parser = super().select_parser(request, parsers)
        # Exactly DRF's own: a view with a JSON parser of its own keeps it.
        return SoundJSONParser() if type(parser) is JSONParser else parser

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer],
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        wanted = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        if not wanted:
            try:
                return super().select_renderer(request, renderers, format_suffix)
            except exceptions.NotAcceptable:
                # An Accept header that names none of the endpoint's formats (text/html
                # alone, a typo) gets its first one, JSON for all but the file
                # endpoints, rather than a 406: what the endpoint has is the useful
                # answer (RFC 9110, section 12.5.1, lets a server ignore Accept).
                first = next(iter(renderers))
                return first, str(first.media_type)
        renderers = list(renderers)
        matching = [renderer for renderer in renderers if renderer.format == wanted]
        if not matching:
            # DRF answers an unknown format with a bare 404; the endpoint does exist.
            offered = ", ".join(dict.fromkeys(str(renderer.format) for renderer in renderers))
            raise exceptions.NotAcceptable(UNKNOWN_FORMAT.format(format=wanted, formats=offered),
                                           available_renderers=renderers)
        return matching[0], str(matching[0].media_type)
