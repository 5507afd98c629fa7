"""gunicorn's own refusals of requests it cannot parse, answered in the API's JSON error
shape whatever the path; `install` replaces gunicorn's HTML writer from
deploy/gunicorn.conf.py. No Django import: gunicorn loads it before the app."""

from __future__ import annotations

import json
import socket

from gunicorn import util


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error`, with the API's JSON error shape as the body."""
    detail = f"{reason}: {mesg}" if mesg else reason
    # ensure_ascii: the message may quote what the client sent, in any bytes.
    body = json.dumps({"detail": detail, "errors": []}, ensure_ascii=True).encode("ascii")
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    util.write_nonblock(sock, head.encode("latin-1") + body)


def install() -> None:
    util.write_error = write_json_error
