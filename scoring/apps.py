from __future__ import annotations

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring and leaderboards"

    def ready(self) -> None:
        # Registers the app's Celery tasks in every process, not only in workers (which
        # discover them at start): work is sent by task name (grading.work.dispatch).
        from scoring import tasks  # noqa: F401
