"""The grading claim leaves the run: grading's own rounds and parts hold it now."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("submissions", "0008_quota_overrides"),
        ("grading", "0010_grading_jobs"),
    ]

    operations = [
        migrations.RemoveField(model_name="run", name="grading_heartbeat"),
        migrations.RemoveField(model_name="run", name="grading_requeues"),
        migrations.RemoveField(model_name="run", name="grading_token"),
    ]
