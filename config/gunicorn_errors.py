"""gunicorn's own refusals as the API's JSON errors.

A request gunicorn cannot parse (a control character in a header, a header line over
8190 bytes, a request line over 4094, a bad method or HTTP version) never reaches Django:
gunicorn answers it itself with a small HTML page (`gunicorn.util.write_error`), even
under /api/, where every answer is JSON `{"detail", "errors"}` (README, Production).
It may not know the path (the request line itself may be what failed), so it answers
JSON whatever the path: no browser sends such a request.

gunicorn has no setting for that page; its worker calls the module function, so
`install` (from deploy/gunicorn.conf.py, in the master before the workers fork) puts
this writer in its place. Pure: no Django import, gunicorn loads it before the app.
"""

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
