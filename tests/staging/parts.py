"""The production parts the staging scenario starts, each on 127.0.0.1, each stopped at the
end with its whole process group (as tests/security/live.py stops gunicorn): moto's S3
server, Celery workers and beat, and the broker's own corner (a Redis database number,
a RabbitMQ virtual host) emptied before and after.

gunicorn comes from tests/security/live.py (`serving`), the fake judge from
tests/grading/scripted_server; PostgreSQL is the test run's database.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.security.live import stop
from tests.support import REPO, live_processes

#: The Redis databases of this scenario (the other suites use 7 and 8): the broker and
#: result store, and the web processes' cache (throttle counts).
REDIS_BROKER = "redis://127.0.0.1:6379/12"
REDIS_CACHE = "redis://127.0.0.1:6379/13"
RABBITMQ = "amqp://guest:guest@127.0.0.1:5672"
RABBITMQ_VHOST = "evalservice-staging"
#: The deployment's commands, as deploy/docker-compose.yml runs them (checked by
#: tests/staging/test_deploy_files.py); here each runs as `python -m` or `python` of this
#: virtualenv, and a worker with one pool process (two cores serve the whole stack here).
QUEUES = "celery,grading,scoring"
WORKER = ["celery", "-A", "config", "worker", "--loglevel=INFO", "-Q", QUEUES]
BEAT = ["celery", "-A", "config", "beat", "--loglevel=INFO"]
BUCKET_INIT = ["python", "deploy/bucket_init.py"]
BUCKET = "staging-runs"
#: How long a part may take to come up before the scenario gives up on it.
START_SECONDS = 60


def free_port() -> int:
    """A port of 127.0.0.1 free right now (for servers that bind it themselves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
        return True
    return False


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """A process leading its own group (so that `stop` or a SIGKILL takes all of it),
    its output in `log`."""
    with log.open("ab") as output:
        return subprocess.Popen(command, cwd=REPO, env=env, stdout=output,
                                stderr=subprocess.STDOUT, start_new_session=True)


def kill(process: subprocess.Popen[Any]) -> None:
    """SIGKILL to the process's whole group: a worker lost with its machine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while live_processes(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)


# --- S3 --------------------------------------------------------------------------------


@dataclass(frozen=True)
class S3:
    endpoint: str
    bucket: str
    access_key: str = "staging"
    secret_key: str = "staging-secret"  # moto takes any
    region: str = "us-east-1"

    def client(self) -> Any:
        import boto3  # type: ignore[import-untyped]

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key)

    def keys(self) -> set[str]:
        """Every object key in the bucket."""
        found: set[str] = set()
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            found.update(item["Key"] for item in page.get("Contents", []))
        return found

    def settings(self) -> dict[str, str]:
        """The service's variables for this bucket (deploy/.env.example)."""
        return {"AWS_STORAGE_BUCKET_NAME": self.bucket, "AWS_S3_ENDPOINT_URL": self.endpoint,
                "AWS_S3_REGION_NAME": self.region, "AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key}


@contextlib.contextmanager
def s3_server(log: Path) -> Iterator[S3]:
    """moto's S3 server (`python -m moto.server`); `bucket_init` makes the bucket."""
    port = free_port()
    process = start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                    dict(os.environ), log)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not answers("127.0.0.1", port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto's S3 server did not start: see {log}")
            time.sleep(0.1)
        yield S3(endpoint=f"http://127.0.0.1:{port}", bucket=BUCKET)
    finally:
        stop(process)


def bucket_init(env: dict[str, str], log: Path) -> None:
    """The deployment's bucket-init step (deploy/bucket_init.py) with the service's `env`."""
    with log.open("ab") as output:
        subprocess.run([sys.executable, *BUCKET_INIT[1:]], cwd=REPO, env=env, stdout=output,
                       stderr=subprocess.STDOUT, check=True, timeout=START_SECONDS)


# --- brokers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Broker:
    """Where the scenario's tasks go: `url` for CELERY_BROKER_URL."""

    name: str
    url: str

    def reachable(self) -> bool:
        parts = urlsplit(self.url)
        return answers(parts.hostname or "127.0.0.1", parts.port or 0)


def redis_broker() -> Broker:
    return Broker("redis", REDIS_BROKER)


def rabbitmq_broker() -> Broker:
    return Broker("rabbitmq", f"{RABBITMQ}/{RABBITMQ_VHOST}")


def _rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=120)


@contextlib.contextmanager
def empty_broker(broker: Broker) -> Iterator[Broker]:
    """The broker's corner of the scenario, empty on the way in and out: the Redis
    database numbers flushed, or a RabbitMQ virtual host of its own made afresh (the
    default one if rabbitmqctl cannot make one here)."""
    if broker.name == "redis":
        import redis

        def flush() -> None:
            for url in (REDIS_BROKER, REDIS_CACHE):
                redis.Redis.from_url(url).flushdb()

        flush()
        try:
            yield broker
        finally:
            flush()
        return
    if shutil.which("rabbitmqctl") is None:
        yield Broker(broker.name, f"{RABBITMQ}//")
        return
    with contextlib.suppress(subprocess.CalledProcessError):
        _rabbitmqctl("delete_vhost", RABBITMQ_VHOST)
    _rabbitmqctl("add_vhost", RABBITMQ_VHOST)
    _rabbitmqctl("set_permissions", "-p", RABBITMQ_VHOST, "guest", ".*", ".*", ".*")
    try:
        yield broker
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            _rabbitmqctl("delete_vhost", RABBITMQ_VHOST)


# --- Celery ----------------------------------------------------------------------------


@dataclass
class Celery:
    """The scenario's workers and beat, all stopped on the way out."""

    env: dict[str, str]
    logs: Path
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    beat: subprocess.Popen[bytes] | None = None

    def start_worker(self, name: str) -> subprocess.Popen[bytes]:
        """A worker as deploy/docker-compose.yml runs it, with one pool process, named
        `name` (PGAPPNAME names its database connections after it)."""
        env = {**self.env, "PGAPPNAME": f"staging-{name}"}
        worker = start([sys.executable, "-m", *WORKER, "--concurrency=1",
                        "--without-gossip", "--without-mingle",
                        "--hostname", f"{name}-{os.getpid()}@%h"],
                       env, self.logs / f"{name}.log")
        self.workers[name] = worker
        return worker

    def start_beat(self) -> None:
        # Its schedule's state goes under VAR_DIR (CELERY_BEAT_SCHEDULE_FILENAME).
        self.beat = start([sys.executable, "-m", *BEAT],
                          {**self.env, "PGAPPNAME": "staging-beat"}, self.logs / "beat.log")

    def stop_all(self) -> None:
        for process in [*self.workers.values(), *([self.beat] if self.beat else [])]:
            stop(process)


@contextlib.contextmanager
def celery(env: dict[str, str], logs: Path) -> Iterator[Celery]:
    parts = Celery(env=env, logs=logs)
    try:
        yield parts
    finally:
        parts.stop_all()
