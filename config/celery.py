"""The Celery app. Tasks live in each app's `tasks.py` and are autodiscovered.

Settings come from Django settings with the `CELERY_` prefix (config/settings.py),
so the embedded filesystem broker and production Redis/RabbitMQ are one switch:
`CELERY_BROKER_URL`.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("evalservice")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="config.ping", ignore_result=False)
def ping() -> str:
    """Answer 'pong': /healthz?worker=1 uses it to prove a worker is consuming the queue."""
    return "pong"
