"""The embedded SQLite database in write-ahead-log mode: readers go on beside the one
writer (the web server, the worker and commands share the file). A property of the file,
set once here, outside a transaction as SQLite requires; other databases are untouched."""

from typing import Any

from django.db import migrations


def write_ahead_log(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=WAL")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("campaign", "0007_agreement_target_and_risk")]

    operations = [migrations.RunPython(write_ahead_log, migrations.RunPython.noop)]
