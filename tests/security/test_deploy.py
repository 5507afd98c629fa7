"""Production settings: `check --deploy --fail-level WARNING` passes with
deploy/.env.example's values and a real key, and a placeholder or short key is refused
at start; only the HTTPS proxy may say a request came over HTTPS; the compose file holds
no password.

The settings are read once, at import, from the environment: each case starts Django in
a process of its own with the environment it names, as a deployment would.
"""

from __future__ import annotations

import contextlib
import os
import re
import runpy
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO

ENV_EXAMPLE = REPO / "deploy" / ".env.example"
COMPOSE = REPO / "deploy" / "docker-compose.yml"
GUNICORN_CONF = REPO / "deploy" / "gunicorn.conf.py"
CHECK = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
HOST = "eval.example.org"  # ALLOWED_HOSTS in .env.example


def env_example() -> dict[str, str]:
    """deploy/.env.example as docker compose reads it: NAME=value, a ` #` starts a comment."""
    values = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, value = line.partition("=")
        values[name.strip()] = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    return values


def real_key() -> str:
    return secrets.token_urlsafe(50)  # 67 characters


@pytest.fixture(scope="module")
def var_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Shared by the module's processes: matplotlib builds its font cache there once.
    return tmp_path_factory.mktemp("var")


def production_env(var_dir: Path, **overrides: str) -> dict[str, str]:
    """This process's environment without any of the service's settings, then
    .env.example's, with the folders moved under the test's own."""
    example = env_example()
    named = set(example) | {f"{name}_FILE" for name in example}
    # The browser tests' plugin sets DJANGO_ALLOW_ASYNC_UNSAFE in this process; no
    # deployment has it (and `check --deploy` rightly refuses it).
    named.add("DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in named}
    env.update(example)
    env.update(VAR_DIR=str(var_dir), MEDIA_ROOT=str(var_dir / "media"))
    env.update(overrides)
    return env


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


class TestTheDeployCheck:
    def test_it_passes_with_the_examples_values_and_a_real_key(self, var_dir: Path) -> None:
        checked = run(CHECK, production_env(var_dir, SECRET_KEY=real_key()))

        assert checked.returncode == 0, checked.stderr
        assert "System check identified no issues (0 silenced)." in checked.stdout

    def test_it_passes_with_the_key_in_a_file_as_compose_gives_it(
        self, var_dir: Path, tmp_path: Path
    ) -> None:
        key_file = tmp_path / "django_secret_key"
        key_file.write_text(real_key(), encoding="utf-8")

        # The example's placeholder stays in the environment: the file wins.
        checked = run(CHECK, production_env(var_dir, SECRET_KEY_FILE=str(key_file)))

        assert checked.returncode == 0, checked.stderr

    @pytest.mark.parametrize(("key", "why"), [
        (None, "a placeholder"),  # .env.example's own: change-me
        ("django-insecure-" + "k" * 20 + real_key(), "a placeholder"),
        (real_key()[:49], "49 characters long"),
        ("ab" * 30, "made of 2 different characters"),
    ])
    def test_a_placeholder_or_weak_key_is_refused_at_start(
        self, var_dir: Path, key: str | None, why: str
    ) -> None:
        env = production_env(var_dir) if key is None else production_env(var_dir, SECRET_KEY=key)

        checked = run(CHECK, env)

        assert checked.returncode != 0
        assert f"ImproperlyConfigured: SECRET_KEY is {why}: give a random key of at least 50 " \
               "characters" in checked.stderr

    def test_while_developing_any_key_will_do(self, var_dir: Path) -> None:
        checked = run([sys.executable, "manage.py", "check"],
                      production_env(var_dir, DEBUG="true"))

        assert checked.returncode == 0, checked.stderr

    def test_without_https_the_deploy_check_names_what_is_missing(self, var_dir: Path) -> None:
        checked = run(CHECK, production_env(var_dir, SECRET_KEY=real_key(),
                                            BEHIND_HTTPS_PROXY="false", SECURE_SSL_REDIRECT="",
                                            SECURE_HSTS_SECONDS="", SECURE_HSTS_PRELOAD="",
                                            SECURE_HSTS_INCLUDE_SUBDOMAINS=""))

        assert checked.returncode != 0
        found = set(re.findall(r"\(security\.(W\d+)\)", checked.stderr + checked.stdout))
        # HSTS, the redirect, and the two cookies.
        assert found == {"W004", "W008", "W012", "W016"}


class TestWhoMaySayHttps:
    def test_the_gunicorn_settings_refuse_anyone(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("GUNICORN_FORWARDED_ALLOW_IPS", "10.0.0.1, *")

        with pytest.raises(SystemExit) as refused:
            runpy.run_path(str(GUNICORN_CONF))

        assert "name the HTTPS proxy's addresses" in str(refused.value)

    @pytest.mark.parametrize(("value", "expected"), [
        (None, "127.0.0.1,::1"),
        (env_example()["GUNICORN_FORWARDED_ALLOW_IPS"], "172.30.0.1"),
    ])
    def test_by_default_and_in_the_example_only_the_proxy_is_trusted(
        self, monkeypatch: pytest.MonkeyPatch, value: str | None, expected: str
    ) -> None:
        if value is None:
            monkeypatch.delenv("GUNICORN_FORWARDED_ALLOW_IPS", raising=False)
        else:
            monkeypatch.setenv("GUNICORN_FORWARDED_ALLOW_IPS", value)

        assert runpy.run_path(str(GUNICORN_CONF))["forwarded_allow_ips"] == expected

    @pytest.mark.parametrize("proxy", ["127.0.0.1", "10.9.9.9"])
    def test_x_forwarded_proto_counts_only_from_the_proxy(
        self, var_dir: Path, proxy: str
    ) -> None:
        """gunicorn serving the site with the example's settings; the test is the proxy
        (127.0.0.1) or a client that is not (the proxy is at 10.9.9.9)."""
        # A database of its own (empty) for /healthz; the example's PostgreSQL is not here.
        with serving(production_env(var_dir, SECRET_KEY=real_key(),
                                    DATABASE_URL=f"sqlite:///{var_dir / 'db.sqlite3'}",
                                    GUNICORN_FORWARDED_ALLOW_IPS=proxy)) as site:
            status, headers = get(f"{site}/api/v1/no-such-endpoint/",
                                  {"Host": HOST, "X-Forwarded-Proto": "https"})
            plain_status, plain_headers = get(f"{site}/api/v1/no-such-endpoint/",
                                              {"Host": HOST})
            health_status, _ = get(f"{site}/healthz", {"Host": HOST})

        if proxy == "127.0.0.1":
            # Over HTTPS, as the proxy says: the API's 404, and browsers told to keep HTTPS.
            assert status == 404
            assert headers["Strict-Transport-Security"] == (
                "max-age=31536000; includeSubDomains; preload")
        else:
            # The same header from anyone else changes nothing: sent to HTTPS.
            assert status == 301
            assert headers["Location"] == f"https://{HOST}/api/v1/no-such-endpoint/"
        assert (plain_status, plain_headers["Location"]) == (
            301, f"https://{HOST}/api/v1/no-such-endpoint/")
        # Probes use plain HTTP: /healthz is not redirected.
        assert health_status == 200


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(env: dict[str, str]) -> Iterator[str]:
    """gunicorn with deploy/gunicorn.conf.py on a free loopback port: its address."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-c", str(GUNICORN_CONF),
         "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.communicate()[1]
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.communicate(timeout=60)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def get(url: str, headers: dict[str, str]) -> tuple[int, Any]:
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=60) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return loaded


class TestTheComposeFile:
    def test_it_holds_no_password(self, compose: dict[str, Any]) -> None:
        for name, service in compose["services"].items():
            environment = service.get("environment") or {}
            for variable in environment:
                secretive = re.search(r"PASSWORD|SECRET|KEY|TOKEN|DATABASE_URL", variable)
                assert not secretive or variable.endswith("_FILE"), (name, variable)

    def test_every_secret_comes_from_a_file(self, compose: dict[str, Any]) -> None:
        files = {name: spec["file"] for name, spec in compose["secrets"].items()}
        assert files == {
            name: f"./secrets/{name}" for name in (
                "django_secret_key", "database_url", "postgres_password", "minio_root_user",
                "minio_root_password", "health_token")
        }
        web = compose["services"]["web"]
        assert web["environment"]["SECRET_KEY_FILE"] == "/run/secrets/django_secret_key"
        assert web["environment"]["DATABASE_URL_FILE"] == "/run/secrets/database_url"
        postgres = compose["services"]["postgres"]["environment"]
        assert postgres["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"

    def test_the_web_port_is_for_the_proxy_on_the_host_only(
        self, compose: dict[str, Any]
    ) -> None:
        assert compose["services"]["web"]["ports"] == ["127.0.0.1:8000:8000"]
        [network] = compose["networks"]["default"]["ipam"]["config"]
        assert network["gateway"] == env_example()["GUNICORN_FORWARDED_ALLOW_IPS"]

    def test_make_secrets_writes_them_once_and_the_url_matches_the_password(
        self, tmp_path: Path
    ) -> None:
        folder = tmp_path / "secrets"
        env = {**os.environ, "SECRETS_DIR": str(folder)}
        script = [str(REPO / "deploy" / "make-secrets.sh")]
        first = subprocess.run(["sh", *script], env=env, capture_output=True, text=True,
                               check=True)
        written = {p.name: p.read_text() for p in folder.iterdir()}
        again = subprocess.run(["sh", *script], env=env, capture_output=True, text=True,
                               check=True)

        assert first.stdout.count("made ") == 6 and again.stdout == ""
        assert {p.name: p.read_text() for p in folder.iterdir()} == written
        password = written["postgres_password"]
        assert written["database_url"] == f"postgres://eval:{password}@postgres:5432/eval"
        assert len(written["django_secret_key"]) == 64
        assert oct(folder.stat().st_mode & 0o777) == "0o700"

