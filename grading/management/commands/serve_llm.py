"""`python manage.py serve_llm`: run the embedded llama.cpp judge in the foreground.

Installs the packaged model `GRADER_LOCAL_MODEL` on first use (or `--model`), then
serves the OpenAI chat protocol on 127.0.0.1 until interrupted. Point other processes
at it with GRADER_BASE_URL=<printed URL> GRADER_MODEL=<model>.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from grading.embedded.server import main


class Command(BaseCommand):
    help = "Serve the embedded llama.cpp judge (packaged GGUF model) until interrupted."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default=None, help="packaged model name")
        parser.add_argument("--port", type=int, default=8080, help="0: any free port")

    def handle(self, *args: Any, **options: Any) -> None:
        model = options["model"] or settings.GRADER_LOCAL_MODEL
        argv = ["--model", model, "--var-dir", str(settings.VAR_DIR),
                "--port", str(options["port"])]
        raise SystemExit(main(argv))
