"""`python manage.py serve_llm`: run the machine's embedded llama.cpp judge in the foreground.

Installs the packaged model `GRADER_LOCAL_MODEL` (or `--model`) on first use, serves
the OpenAI chat protocol on 127.0.0.1 and records the server under VAR_DIR, where the
worker, the `grade` command and the site find and share it (grading/embedded/shared.py)
until this command is interrupted. If that model is already served under this VAR_DIR,
it says where and leaves it be.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from grading.embedded.models import MODELS, ModelInstallError
from grading.embedded.server import EmbeddedJudge, ServerOptions, stop_on_signals
from grading.embedded.shared import shared_judge, started_judge, stop_started_judges

ALREADY_SERVED = "{model} is already served at {base_url} (process {owner}); nothing to do"
SERVING = "serving {model} at {base_url} with {slots} parallel slots (Ctrl-C stops)"
SERVER_DIED = "the embedded judge exited with code {code}; log: {log}"


class Command(BaseCommand):
    help = "Serve the machine's embedded llama.cpp judge (packaged GGUF model) until interrupted."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default=None, choices=sorted(MODELS),
                            help="packaged model (default: GRADER_LOCAL_MODEL)")
        parser.add_argument("--port", type=int, default=8080, help="0: any free port")

    def handle(self, *args: Any, **options: Any) -> None:
        model = options["model"] or settings.GRADER_LOCAL_MODEL
        var_dir = Path(settings.VAR_DIR)
        stop = stop_on_signals()

        def launch(model: str, var_dir: Path) -> EmbeddedJudge:
            return EmbeddedJudge(model, var_dir=var_dir,
                                 options=ServerOptions(port=options["port"]))

        try:
            judge = shared_judge(model, var_dir=var_dir, launch=launch)
        except (ModelInstallError, RuntimeError) as error:
            raise CommandError(str(error)) from error
        server = started_judge(model, var_dir=var_dir)
        if judge.owner_pid != os.getpid() or server is None:
            self.stdout.write(ALREADY_SERVED.format(model=model, base_url=judge.base_url,
                                                    owner=judge.owner_pid))
            return
        self.stdout.write(SERVING.format(model=model, base_url=judge.base_url,
                                         slots=judge.slots))
        try:
            while not stop.wait(timeout=1.0):
                code = server.exit_code()
                if code is not None:
                    raise CommandError(SERVER_DIED.format(code=code, log=server.log_path))
        finally:
            stop_started_judges()

