from __future__ import annotations

from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Grading (LLM judge)"
