"""Stored snapshots name Rubric-Cover by their track's cover_k: `rubric_cover@10` becomes
`rubric_cover@K` where a snapshot recorded cover_k K; one that recorded none (a response's)
keeps `rubric_cover@10`. Backwards: all `rubric_cover@10` again; only the names change."""

from django.db import migrations

from scoring.leaderboard import snapshot_cover_k, statistics_renamed
from scoring.measures.catalogue import LEGACY_RUBRIC_COVER, rubric_cover_name

RUBRIC_KINDS = ("ranking", "response")


def _renamed(values, old, new):
    return {new if key == old else key: value for key, value in values.items()}


def _rename(apps, *, forwards):
    Evaluation = apps.get_model("scoring", "Evaluation")
    RunScore = apps.get_model("scoring", "RunScore")
    evaluations = Evaluation.objects.filter(track__kind__in=RUBRIC_KINDS)
    for evaluation in evaluations.iterator(chunk_size=200):
        name = rubric_cover_name(snapshot_cover_k(evaluation.params))
        if name == LEGACY_RUBRIC_COVER:
            continue
        old, new = (LEGACY_RUBRIC_COVER, name) if forwards else (name, LEGACY_RUBRIC_COVER)
        evaluation.statistics = statistics_renamed(evaluation.statistics, old, new)
        evaluation.save(update_fields=["statistics"])
        scores = list(RunScore.objects.filter(evaluation=evaluation))
        for score in scores:
            score.aggregates = _renamed(score.aggregates, old, new)
            score.per_question = _renamed(score.per_question, old, new)
        RunScore.objects.bulk_update(scores, ["aggregates", "per_question"], batch_size=500)


def forwards(apps, schema_editor):
    _rename(apps, forwards=True)


def backwards(apps, schema_editor):
    _rename(apps, forwards=False)


class Migration(migrations.Migration):

    dependencies = [
        ('scoring', '0005_evaluation_labels'),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=True),
    ]
