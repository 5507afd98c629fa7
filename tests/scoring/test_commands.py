"""`python manage.py score SLUG` and `publish_leaderboards SLUG --as ORGANISER`:
what they store, what they print, and whom they refuse."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.management.commands.publish_leaderboards import NO_TRACK, NOT_AN_ORGANISER
from scoring.models import Evaluation
from submissions.models import Run, RunStatus
from tests.scoring.support import assert_toy_ac_scores, assert_toy_pr_scores, boards
from tests.support import Personas

pytestmark = pytest.mark.django_db


def run_command(*args: str) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(*args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def published_tracks() -> set[str]:
    return set(Evaluation.objects.filter(published_at__isnull=False)
               .values_list("track__slug", flat=True))


class TestScore:
    def test_it_stores_a_snapshot_per_track_with_the_toy_numbers(
        self, personas: Personas, graded_toy_run: Run
    ) -> None:
        assert not Evaluation.objects.exists()

        out, err = run_command("score", "toy")

        ac = Evaluation.objects.get(track__slug="ac")
        pr = Evaluation.objects.get(track__slug="pr")
        assert (ac.published_at, pr.published_at) == (None, None)
        [ac_score] = ac.scores.all()
        assert ac_score.run == graded_toy_run
        assert_toy_ac_scores(ac_score.aggregates)
        assert_toy_pr_scores(boards(personas, "organiser")["pr"]["rows"])
        graded_toy_run.refresh_from_db()
        assert graded_toy_run.status == RunStatus.SCORED
        # What it prints: a line per track, then a line per run, rounded to four places.
        # Cut-offs 10 and 20 agree (no toy run returns more than three passages), and
        # MSnDCG is nDCG with trec_eval's gain and discount.
        lines = out.splitlines()
        assert lines[0].startswith(
            f"Track ac: 1 run(s) scored (evaluation {ac.pk}, judge: scripted-judge (")
        assert lines[1] == ("  WASEDA-AC-1      {'accuracy': 0.6667, 'nugget_precision': 0.4444, "
                            "'r_o': 0.15, 'r_u': 0.85, 'hmr': 0.255, 'ece': 0.3833, "
                            "'brier': 0.2625}")
        assert lines[2] == (f"Track pr: 2 run(s) scored (evaluation {pr.pk}, "
                            "judge: derived from AC judgments)")
        # Every measure of the catalogue, in its order.
        assert lines[3] == ("  WASEDA-PO-1      {'ndcg@10': 0.8066, 'ndcg@20': 0.8066, "
                            "'q_measure': 0.75, 'nerr@10': 0.875, 'nerr@20': 0.875, "
                            "'ms_ndcg@10': 0.8066, 'ms_ndcg@20': 0.8066}")
        assert lines[4] == ("  KYOTO-PG-1       {'ndcg@10': 0.3066, 'ndcg@20': 0.3066, "
                            "'q_measure': 0.25, 'nerr@10': 0.375, 'nerr@20': 0.375, "
                            "'ms_ndcg@10': 0.3066, 'ms_ndcg@20': 0.3066}")
        assert len(lines) == 5 and err == ""

    def test_each_run_adds_a_new_snapshot_and_keeps_the_old(
        self, personas: Personas, graded_toy_run: Run
    ) -> None:
        run_command("score", "toy")
        first = set(Evaluation.objects.values_list("pk", flat=True))

        run_command("score", "toy")

        assert Evaluation.objects.count() == 4
        latest = boards(personas, "organiser")
        assert {latest["ac"]["evaluation"], latest["pr"]["evaluation"]}.isdisjoint(first)
        assert_toy_ac_scores(latest["ac"]["rows"][0])

    def test_an_unknown_campaign_is_named_with_the_known_ones(self, personas: Personas) -> None:
        with pytest.raises(CommandError, match=r"^no campaign 'nope' \(campaigns: toy\)$"):
            run_command("score", "nope")
        assert not Evaluation.objects.exists()


class TestPublishLeaderboards:
    def test_an_organiser_publishes_every_track_for_participants(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        assert boards(personas, "participant_b") == {}

        out, err = run_command("publish_leaderboards", "toy", "--as", "olga")

        assert published_tracks() == {"ac", "pr"}
        for evaluation in scored:
            evaluation.refresh_from_db()
            assert evaluation.published_by_id == personas.organiser.pk
            stamp = f"{evaluation.computed_at:%Y-%m-%d %H:%M} UTC"
            assert f"track {evaluation.track.slug}: published the scores of {stamp}" in out
        assert err == ""
        seen = boards(personas, "participant_b")
        assert seen.keys() == {"ac", "pr"}
        assert_toy_ac_scores(seen["ac"]["rows"][0])
        # The public waits for results_release (a month away in the fixture).
        assert boards(personas, "anonymous") == {}
        assert boards(personas, "outsider") == {}

    def test_track_publishes_only_that_track(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        run_command("publish_leaderboards", "toy", "--track", "pr", "--as", "olga")

        assert published_tracks() == {"pr"}
        assert boards(personas, "participant_a").keys() == {"pr"}

    def test_it_publishes_the_latest_snapshot(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        run_command("score", "toy")
        latest = Evaluation.objects.get(track__slug="ac", pk__gt=scored[0].pk)

        run_command("publish_leaderboards", "toy", "--track", "ac", "--as", "olga")

        assert list(Evaluation.objects.filter(published_at__isnull=False)) == [latest]
        assert boards(personas, "participant_a")["ac"]["evaluation"] == latest.pk

    def test_a_track_not_scored_yet_is_reported_not_published(
        self, personas: Personas, graded_toy_run: Run
    ) -> None:
        out, err = run_command("publish_leaderboards", "toy", "--as", "olga")

        assert out == ""
        assert err.splitlines() == ["track ac: not scored yet, nothing to publish",
                                    "track pr: not scored yet, nothing to publish"]
        assert not Evaluation.objects.exists()

    @pytest.mark.parametrize("username", ["alice", "bob", "oscar"])
    def test_no_one_but_an_organiser_may_publish(
        self, personas: Personas, scored: list[Evaluation], username: str
    ) -> None:
        message = NOT_AN_ORGANISER.format(username=username, campaign="toy")
        with pytest.raises(CommandError, match=f"^{re.escape(message)}$"):
            run_command("publish_leaderboards", "toy", "--as", username)

        assert published_tracks() == set()
        assert boards(personas, "participant_a") == {}

    @pytest.mark.parametrize(("args", "message"), [
        (["nope", "--as", "olga"], "no campaign 'nope' (campaigns: toy)"),
        (["toy", "--as", "nobody"], "no user 'nobody'"),
        (["toy", "--track", "xx", "--as", "olga"],
         NO_TRACK.format(track="xx", campaign="toy", tracks="ac, pr")),
    ])
    def test_unknown_names_are_refused_with_a_clear_message(
        self, personas: Personas, scored: list[Evaluation], args: list[str], message: str
    ) -> None:
        with pytest.raises(CommandError) as refused:
            run_command("publish_leaderboards", *args)

        assert str(refused.value) == message
        assert published_tracks() == set()
