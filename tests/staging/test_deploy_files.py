"""deploy/ says what the staging test runs: docker-compose.yml has a
service for each part the test starts, with the same command, and the Dockerfile installs
what those commands need from requirements.txt.

No container engine here: the compose file is read as YAML (its merge keys resolved, as
compose resolves them), and the Dockerfile as text.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.security.live import GUNICORN_CONF
from tests.staging.parts import BEAT, BUCKET_INIT, QUEUES, WORKER
from tests.support import REPO

DEPLOY = REPO / "deploy"
NO_BUCKET = ("AWS_STORAGE_BUCKET_NAME is unset: runs are stored in local files, no bucket "
             "to make")
#: The services of the stack (README.md, "Production").
SERVICES = {"web", "worker", "beat", "migrate", "bucket-init", "postgres", "redis", "minio",
            "vllm"}
#: What the app's services start, by the module of the program each command names.
PROGRAMS = {"gunicorn": "gunicorn", "celery": "celery"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text("utf-8"))
    return loaded


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text(encoding="utf-8")


def pinned_requirements() -> dict[str, str]:
    """requirements.txt's `name==version` lines, names in lower case without extras."""
    pins = {}
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        found = re.match(r"^([A-Za-z0-9_.-]+)(\[[^]]*\])?==(\S+)", line.strip())
        if found:
            pins[found.group(1).lower()] = found.group(3)
    return pins


def without_concurrency(command: list[str]) -> list[str]:
    """A worker's command less its pool size (the test runs one process per worker)."""
    return [part for part in command if not part.startswith("--concurrency")]


def test_the_stack_has_every_part_the_issue_names(services: dict[str, Any]) -> None:
    assert set(services) == SERVICES


def test_web_runs_gunicorn_with_the_settings_the_staging_test_serves_with(
    services: dict[str, Any],
) -> None:
    command = services["web"]["command"]
    assert command[:4] == ["gunicorn", "config.wsgi:application", "-c",
                           str(GUNICORN_CONF.relative_to(REPO))]
    # The image's own default command is the same, so `docker run IMAGE` serves the site.
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile(), flags=re.M)
    assert cmd is not None and yaml.safe_load(cmd.group(1)) == command


def test_workers_beat_and_the_one_shot_steps_are_the_staging_tests_commands(
    services: dict[str, Any],
) -> None:
    assert without_concurrency(services["worker"]["command"]) == WORKER
    assert services["beat"]["command"] == BEAT
    assert services["bucket-init"]["command"] == BUCKET_INIT
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    # Every queue the settings route to is consumed (config/settings.py, CELERY_TASK_ROUTES).
    from django.conf import settings

    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert routed <= set(QUEUES.split(","))


def test_the_app_waits_for_its_schema_and_bucket_and_they_run_once(
    services: dict[str, Any],
) -> None:
    for name in ("web", "worker", "beat"):
        needs = services[name]["depends_on"]
        assert needs["migrate"] == {"condition": "service_completed_successfully"}, name
        assert needs["bucket-init"] == {"condition": "service_completed_successfully"}, name
        assert services[name]["restart"] == "unless-stopped"
    for name in ("migrate", "bucket-init"):
        assert services[name]["restart"] == "on-failure", name
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert "healthcheck" in services["postgres"]


def test_vllm_is_pinned_and_caches_prefixes(services: dict[str, Any]) -> None:
    vllm = services["vllm"]
    image, _, tag = vllm["image"].partition(":")
    assert image == "vllm/vllm-openai" and re.fullmatch(r"v\d+\.\d+\.\d+", tag)
    command = vllm["command"]
    assert "--enable-prefix-caching" in command
    model = command[command.index("--model") + 1]
    # The workers ask for the model vLLM serves under that name (deploy/.env.example).
    assert command[command.index("--served-model-name") + 1] == model
    example = (DEPLOY / ".env.example").read_text(encoding="utf-8")
    assert re.search(rf"^GRADER_MODEL={re.escape(model)}\s", example, flags=re.M)
    assert "--revision" in command


def test_the_image_installs_what_the_commands_run_from_requirements() -> None:
    text = dockerfile()
    assert "pip install --no-cache-dir -r requirements.txt" in text
    pins = pinned_requirements()
    for program in PROGRAMS.values():
        assert program in pins, f"{program} is not pinned in requirements.txt"
    # bucket_init.py speaks S3 through boto3, as django-storages does.
    assert {"boto3", "django-storages", "psycopg"} <= set(pins)
    # Python of the image and of CI agree on the major version (pyproject's target).
    base = re.search(r"^FROM python:(\d+\.\d+)", text, flags=re.M)
    assert base is not None and base.group(1) == "3.11"


def test_every_service_command_runs_a_program_the_image_has(services: dict[str, Any]) -> None:
    app = {"web", "worker", "beat", "migrate", "bucket-init"}
    for name in app:
        program = services[name]["command"][0]
        assert program == "python" or program in PROGRAMS, (name, program)
        if program == "python":
            script = services[name]["command"][1]
            assert (REPO / script).is_file(), (name, script)


def test_the_readme_gives_the_same_stack_as_plain_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    production = readme.split("## Production", 1)[1].split("\n## ", 1)[0]
    for service in ("web", "worker", "beat", "migrate", "bucket-init"):
        command = shlex.join(yaml.safe_load(
            (DEPLOY / "docker-compose.yml").read_text("utf-8"))["services"][service]["command"])
        if service == "web":
            command = command.replace(" --bind 0.0.0.0:8000", "")
        assert command in production, (service, command)


def test_bucket_init_has_nothing_to_make_without_a_bucket(tmp_path: Path) -> None:
    # With a bucket it is the staging test's first step (tests/staging/parts.py).
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("AWS_STORAGE_BUCKET_NAME")}
    env.update(VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings")
    done = subprocess.run([sys.executable, *BUCKET_INIT[1:]], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, NO_BUCKET), done.stderr
