"""The Celery app: settings from Django's with the ``CELERY_`` prefix, tasks autodiscovered,
the queues, beat's reaper and the workers' heartbeats (docs/deployment.md, "The task queue")."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("evalservice")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="config.ping", ignore_result=False)
def ping() -> str:
    """Answer 'pong': /healthz?worker=1 uses it to prove a worker is consuming the queue."""
    return "pong"


# The embedded judge (GRADER_BASE_URL unset) is one llama.cpp server per machine. The
# worker's main process finds or starts it before forking its prefork children, so it
# is loaded before the first task, and the lease taken on it (embedded_judge/shared.py)
# is the children's too: it is used for as long as the worker runs.
# Imports are inside the handlers: Django is set up only once the worker starts.


@worker_init.connect
def start_embedded_judge(**kwargs: Any) -> None:
    from grading.setup import worker_judge_start

    worker_judge_start()


# The worker's heartbeat in the database (grading.work.workers), from its main process: it
# beats while the children grade, and stops with the worker.
_heartbeat: list[Any] = []


@worker_ready.connect
def start_worker_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    from grading.work.workers import WorkerHeartbeatThread

    beat = WorkerHeartbeatThread(hostname=str(sender.hostname),
                                 queues=sorted(sender.app.amqp.queues.consume_from))
    beat.start()
    _heartbeat.append(beat)


@worker_shutdown.connect
def stop_worker_heartbeat(**kwargs: Any) -> None:
    while _heartbeat:
        _heartbeat.pop().stop()
