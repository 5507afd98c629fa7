from __future__ import annotations

from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Grading (LLM judge)"

    def ready(self) -> None:
        # Registers the app's Celery tasks in every process, not only in workers (which
        # discover them at start): work is sent by task name (grading.work.dispatch).
        from grading import tasks  # noqa: F401
