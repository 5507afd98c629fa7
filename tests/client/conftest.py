"""The participant CLI (client/) as a participant runs it.

`evalctl` is installed once per session from client/ with pip, as a participant installs
it, into a folder of its own with its one dependency (httpx2) and nothing else, and run
as ``python -S -m evalctl``: without the service's virtualenv on its path, so neither
Django nor numpy nor anything else of the server's can be imported by it. It talks to the
site as production serves it (gunicorn, DEBUG off, tests/security/live.py) on the test
run's database, shared by the tests of a module; each test has its own user config folder.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import AbstractBaseUser
from rest_framework.authtoken.models import Token

from tests.security.live import LiveSite, serving, site_environment
from tests.support import REPO, Personas

CLIENT = REPO / "client"
#: The server's pure parsers, which the client's build puts inside it (client/pyproject.toml).
FORMATS = REPO / "submissions" / "formats"
PASSWORD = "secret-pass-123"  # tests.factories.UserFactory's
#: What the site allows, low enough for a test to reach: the largest run file, and failed
#: sign-ins per user name (only failures count).
RUN_MAX_BYTES = 20_000
SIGN_INS_PER_USERNAME = 3
#: How long one command may take: an upload validated by a busy 2-core machine.
COMMAND_SECONDS = 180


@pytest.fixture(scope="session")
def evalctl_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """client/ installed with pip (build isolation, dependencies from the package index).

    Built from a copy of what the build reads (client/ and the server's parsers, in the
    repository's layout), so the build leaves nothing in the work tree.
    """
    sources = tmp_path_factory.mktemp("evalctl-sources")
    shutil.copytree(CLIENT, sources / "client",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    shutil.copytree(FORMATS, sources / "submissions" / "formats",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path_factory.mktemp("evalctl-install")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--target", str(target), str(sources / "client")],
        capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, f"pip install ./client failed:\n{result.stderr}"
    return target


@pytest.fixture(scope="module")
def site(worker_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[LiveSite]:
    """The site on loopback, for the tests of one module (the database is emptied after
    each test; gunicorn keeps running)."""
    folder = tmp_path_factory.mktemp("site")
    env = site_environment(worker_env, database_url=worker_env["DATABASE_URL"],
                           var_dir=folder / "var", media=folder / "media",
                           secret_key=settings.SECRET_KEY)
    env.update(RUN_MAX_BYTES=str(RUN_MAX_BYTES),
               THROTTLE_SIGN_IN_USERNAME_RATE=f"{SIGN_INS_PER_USERNAME}/hour")
    with serving(env, log=folder / "gunicorn.log") as live:
        yield live


def give_site_password(user: AbstractBaseUser) -> None:
    """Give `user` PASSWORD hashed as the site hashes it: the tests' own (fast) hasher,
    tests/conftest.py's, is not one the site knows."""
    hasher = PBKDF2PasswordHasher()
    user.password = hasher.encode(PASSWORD, hasher.salt())
    user.save(update_fields=["password"])


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    def problem_lines(self) -> list[str]:
        """The indented lines under an error: the problems of a file, as printed."""
        return [line.strip() for line in self.err.splitlines() if line.startswith("  ")]


@dataclass(frozen=True)
class Cli:
    """`evalctl` of one user: their own config folder, their own working folder."""

    install: Path
    home: Path
    site: LiveSite

    @property
    def config_file(self) -> Path:
        return self.home / ".config" / "evalctl" / "config.json"

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
               "XDG_CONFIG_HOME": str(self.home / ".config"), "PYTHONPATH": str(self.install),
               "PYTHONNOUSERSITE": "1", "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8"}
        env.update(extra or {})
        return env

    def __call__(self, *args: str, stdin: str = "",
                 env: Mapping[str, str] | None = None) -> Outcome:
        done = subprocess.run(
            [sys.executable, "-S", "-m", "evalctl", *args], input=stdin, text=True,
            capture_output=True, cwd=self.home, env=self.environment(env),
            timeout=COMMAND_SECONDS, check=False)
        assert "Traceback" not in done.stderr, done.stderr
        return Outcome(done.returncode, done.stdout, done.stderr)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-S", "-m", "evalctl", *args], text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.home,
            env=self.environment())

    def sign_in_with_token(self, personas: Personas, who: str) -> None:
        token, _ = Token.objects.get_or_create(user=getattr(personas, who))
        outcome = self("login", "--site", self.site.base_url, "--token", token.key)
        assert outcome.code == 0, outcome.err

    def file_mode(self) -> int:
        return stat.S_IMODE(self.config_file.stat().st_mode)


@pytest.fixture
def cli_of(evalctl_install: Path, site: LiveSite, tmp_path: Path) -> Callable[[str], Cli]:
    """`cli_of("alice")`: the CLI of a user with a home folder of their own."""

    def make(name: str) -> Cli:
        home = tmp_path / "home" / name
        home.mkdir(parents=True, exist_ok=True)
        return Cli(install=evalctl_install, home=home, site=site)

    return make
