"""The embedded default's SQLite database under concurrent writers on one core: each
transaction reads, then writes, as grading and publishing do; none is refused "locked"."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.support import REPO

WRITERS = 4
TRANSACTIONS = 150

#: One writer: Django set up on the database file, each transaction reading a counter
#: and then writing it, pinned to the first core where the machine allows it.
WRITER = f"""
import os, sys
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {{sorted(os.sched_getaffinity(0))[0]}})
import django
django.setup()
from django.db import connection, transaction
for _ in range({TRANSACTIONS}):
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT n FROM counter WHERE id = 1")
            (n,) = cursor.fetchone()
            cursor.execute("UPDATE counter SET n = %s WHERE id = 1", [n + 1])
"""


def test_concurrent_writers_on_one_core_all_commit_and_lose_no_update(tmp_path: Path) -> None:
    database = tmp_path / "writers.sqlite3"
    with sqlite3.connect(database) as setup:
        setup.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
        setup.execute("INSERT INTO counter VALUES (1, 0)")
        setup.execute("PRAGMA journal_mode=WAL")  # as the migrations leave the database
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}",
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER], cwd=REPO, env=env,
                                stderr=subprocess.PIPE, text=True)
               for _ in range(WRITERS)]
    errors = [writer.communicate(timeout=300)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * WRITERS, "\n".join(errors)
    with sqlite3.connect(database) as check:
        assert check.execute("SELECT n FROM counter").fetchone() == (WRITERS * TRANSACTIONS,)


@pytest.mark.django_db
def test_the_migrated_sqlite_database_keeps_a_write_ahead_log() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("a journal mode is SQLite's (the embedded default)")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone() == ("wal",)

