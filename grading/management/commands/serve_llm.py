"""`python manage.py serve_llm`: keep the machine's embedded llama.cpp judge up in the
foreground, holding a lease on it; `--stop` stops it at once (docs/judging.md, "The engine")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from embedded_judge.child import stop_on_signals
from embedded_judge.models import MODELS, ModelInstallError
from embedded_judge.options import Lease, ServerOptions, server_log_path
from embedded_judge.server import EmbeddedJudge
from embedded_judge.shared import find_judge, shared_judge, stop_judge

ALREADY_SERVED = "{model} is already served at {base_url} (process {pid}); nothing to do"
SERVING = ("serving {model} at {base_url} with {slots} parallel slots, {engine} engine "
           "(Ctrl-C: it stops once no other process uses it)")
SERVER_GONE = "the embedded judge (process {pid}) is gone; log: {log}"
STOPPED = "stopped {model} at {base_url} (process {pid})"
NOT_RUNNING = "{model} is not served under {var_dir}"


class Command(BaseCommand):
    help = ("Keep the machine's embedded llama.cpp judge (packaged GGUF model) up until "
            "interrupted, or stop it.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", default=None, choices=sorted(MODELS),
                            help="packaged model (default: GRADER_LOCAL_MODEL)")
        parser.add_argument("--port", type=int, default=8080, help="0: any free port")
        parser.add_argument("--stop", action="store_true",
                            help="stop the running server now, whoever uses it")

    def handle(self, *args: Any, **options: Any) -> None:
        model = options["model"] or settings.GRADER_LOCAL_MODEL
        var_dir = Path(settings.VAR_DIR)
        if options["stop"]:
            stopped = stop_judge(model, var_dir=var_dir)
            self.stdout.write(NOT_RUNNING.format(model=model, var_dir=var_dir) if stopped is None
                              else STOPPED.format(model=model, base_url=stopped.base_url,
                                                  pid=stopped.pid))
            return
        stop = stop_on_signals()

        def launch(model: str, var_dir: Path, lease: Lease, engine: str | None) -> EmbeddedJudge:
            return EmbeddedJudge(model, var_dir=var_dir, lease=lease, engine=engine,
                                 options=ServerOptions(port=options["port"]))

        try:
            judge = shared_judge(model, var_dir=var_dir, launch=launch,
                                 idle_seconds=settings.GRADER_LOCAL_IDLE_SECONDS,
                                 engine=settings.GRADER_LOCAL_ENGINE)
        except (ModelInstallError, RuntimeError) as error:
            raise CommandError(str(error)) from error
        if judge.started_by != os.getpid():
            self.stdout.write(ALREADY_SERVED.format(model=model, base_url=judge.base_url,
                                                    pid=judge.pid))
            return
        self.stdout.write(SERVING.format(model=model, base_url=judge.base_url,
                                         slots=judge.slots, engine=judge.engine))
        while not stop.wait(timeout=1.0):
            if find_judge(model, var_dir=var_dir) != judge:
                raise CommandError(SERVER_GONE.format(
                    pid=judge.pid, log=server_log_path(var_dir)))
