"""gunicorn settings; every value can be overridden by GUNICORN_* variables."""

from __future__ import annotations

import os

workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# Uploads of 50 MB runs over slow links need more than the 30 s default.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-")
errorlog = "-"
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
