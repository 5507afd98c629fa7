"""Grading's own lease: a round per run (GradingJob) in parts (GradingPart), taken over from the
run's claim fields and from the chunks of the rounds under way."""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

IN_GRADING = ("queued", "grading")


def rounds_from_claims(apps, schema_editor):
    """Each run QUEUED or GRADING gets a round: its chunks of the round under way as the parts,
    else one part holding the run's claim as it was."""
    Run = apps.get_model("submissions", "Run")
    GradingChunk = apps.get_model("grading", "GradingChunk")
    GradingJob = apps.get_model("grading", "GradingJob")
    GradingPart = apps.get_model("grading", "GradingPart")
    now = django.utils.timezone.now()
    for run in Run.objects.filter(status__in=IN_GRADING).iterator():
        heartbeat = run.grading_heartbeat or now
        job = GradingJob.objects.create(run=run, round=run.grading_token or uuid.uuid4().hex,
                                        heartbeat=heartbeat)
        chunks = list(GradingChunk.objects.filter(run=run, round=run.grading_token)
                      .exclude(round="").order_by("number")) if run.status == "grading" else []
        if chunks:
            GradingPart.objects.bulk_create([GradingPart(
                job=job, number=c.number, qids=c.qids, nuggets=c.nuggets, status=c.status,
                token=c.token, heartbeat=c.heartbeat or heartbeat, requeues=c.requeues,
                graded_by=c.graded_by, judge_calls=c.entailment_calls + c.answer_calls,
                needs_review=c.needs_review) for c in chunks])
        else:
            GradingPart.objects.create(
                job=job, number=1, status=run.status, heartbeat=heartbeat,
                token=run.grading_token if run.status == "grading" else "",
                requeues=run.grading_requeues)


class Migration(migrations.Migration):

    dependencies = [
        ('grading', '0009_decided_by_second_judge'),
        ('submissions', '0008_quota_overrides'),
    ]

    operations = [
        migrations.CreateModel(
            name='GradingJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('round', models.CharField(blank=True, max_length=64)),
                ('heartbeat', models.DateTimeField()),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('run', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='grading_job', to='submissions.run')),
            ],
        ),
        migrations.CreateModel(
            name='GradingPart',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('qids', models.JSONField(blank=True, help_text='None: the whole run', null=True)),
                ('nuggets', models.PositiveIntegerField(default=0)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('grading', 'Being graded'), ('graded', 'Graded'), ('failed', 'Failed')], default='queued', max_length=16)),
                ('token', models.CharField(blank=True, max_length=64)),
                ('heartbeat', models.DateTimeField()),
                ('requeues', models.PositiveSmallIntegerField(default=0)),
                ('graded_by', models.CharField(blank=True, max_length=200)),
                ('judge_calls', models.PositiveIntegerField(default=0)),
                ('needs_review', models.PositiveIntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='parts', to='grading.gradingjob')),
            ],
            options={
                'ordering': ['job', 'number'],
            },
        ),
        migrations.RunPython(rounds_from_claims, migrations.RunPython.noop),
        migrations.DeleteModel(
            name='GradingChunk',
        ),
        migrations.AddConstraint(
            model_name='gradingpart',
            constraint=models.UniqueConstraint(fields=('job', 'number'), name='one_part_number_per_job'),
        ),
    ]
