"""gunicorn settings; every value can be overridden by GUNICORN_* variables."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The repository, for config.gunicorn_errors: gunicorn reads this file before the app.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from config.gunicorn_errors import install as answer_refusals_in_json

FORWARDED_FROM_ANYONE = (
    "GUNICORN_FORWARDED_ALLOW_IPS=*: any client that reaches this port could then say its "
    "request came over HTTPS (X-Forwarded-Proto); name the HTTPS proxy's addresses or "
    "networks instead, e.g. 172.30.0.1 (deploy/docker-compose.yml) or 10.0.0.0/24"
)

workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# Uploads of 50 MB runs over slow links need more than the 30 s default.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-")
errorlog = "-"
# Only these peers may set X-Forwarded-Proto: gunicorn then serves the request as https
# (wsgi.url_scheme), which is what Django believes (config/settings.py, BEHIND_HTTPS_PROXY).
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
if "*" in (peer.strip() for peer in forwarded_allow_ips.split(",")):
    raise SystemExit(FORWARDED_FROM_ANYONE)

# A request gunicorn refuses itself (bad header, too long a line) gets a JSON error too.
answer_refusals_in_json()
