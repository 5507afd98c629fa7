"""Publishing refuses what should not go out yet (docs/judging.md): scores resting on
doubtful judgments no organiser has reviewed (unless forced, which is recorded), and a
snapshot computed before the latest judgment edit (never, forced or not). The same rules
through the service, `publish_leaderboards` and the API."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from grading.models import Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from grading.review.edits import judgment_edit
from scoring.api import FORCE_HINT as API_FORCE_HINT
from scoring.api import NOT_PUBLISHED
from scoring.management.commands.publish_leaderboards import FORCE_HINT, FORCED, REFUSED
from scoring.models import Evaluation, PublishOverride
from scoring.selectors import (
    DOUBTFUL_NOT_REVIEWED,
    STALE_SNAPSHOT,
    UTC_TIME,
    campaign_qrels,
    evaluation_publish_problems,
    judgment_edit_count,
)
from scoring.services import PublishRefused, campaign_score, evaluation_publish
from scoring.track_scoring import CampaignScoring, pr_track
from submissions.models import Run
from tests.grading.fixtures import ESA_LAUNCH, SOFT_LANDING, confirm, judgment_of
from tests.grading.rounds import round_graded
from tests.grading.scripted_server import ScriptedJudge
from tests.scoring.support import assert_toy_ac_scores, boards, publish_url
from tests.support import Personas

pytestmark = pytest.mark.django_db

#: The judge's probability for two verdicts of tests/data/toy/WASEDA-AC-1, both under the
#: campaign's review threshold (0.8): the bogus nugget above, and D002's answer check.
DOUBT = {SOFT_LANDING: 0.6, "Buzz Aldrin": 0.7}
REVIEW_QUEUE = "/campaigns/toy/judgments/?to_review=1&doubtful=1"


def doubt_message(track: str, count: int) -> str:
    return DOUBTFUL_NOT_REVIEWED.format(count=count, track=track, threshold=0.8,
                                        url=REVIEW_QUEUE)


def utc(at: datetime) -> str:
    return at.astimezone(UTC).strftime(UTC_TIME)


def stale_message(evaluation: Evaluation) -> str:
    latest = JudgmentEdit.objects.order_by("-edited_at").first()
    assert latest is not None
    return STALE_SNAPSHOT.format(track=evaluation.track.slug, slug="toy",
                                 computed=utc(evaluation.computed_at),
                                 edited=utc(latest.edited_at))


def published() -> set[tuple[str, int]]:
    return set(Evaluation.objects.filter(published_at__isnull=False)
               .values_list("track__slug", "pk"))


def run_command(*args: str) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(*args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


@pytest.fixture
def doubted(toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge) -> list[Evaluation]:
    """The toy run graded with the judge unsure of two judgments (DOUBT), and scored:
    one snapshot per track (ac, then pr), unpublished."""
    script.sure.update(DOUBT)
    run_grade(run=toy_ac_run, judge=judge)
    round_graded(toy_ac_run)
    assert judgment_of(SOFT_LANDING).confidence == pytest.approx(0.6)
    assert judgment_of("Buzz Aldrin").confidence == pytest.approx(0.7)
    return campaign_score(campaign=toy_ac_run.track.campaign)


class TestDoubt:
    def test_unreviewed_doubtful_judgments_keep_every_track_unpublished(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        for evaluation in doubted:
            with pytest.raises(PublishRefused) as refused:
                evaluation_publish(evaluation=evaluation, user=personas.organiser)
            # The PR qrels come from the same AC judgments, so they stand behind both.
            assert [p.message for p in refused.value.problems] == [
                doubt_message(evaluation.track.slug, 2)]
            assert refused.value.waivable

        assert published() == set()
        assert not PublishOverride.objects.exists()
        assert boards(personas, "participant_a") == {}

    def test_it_publishes_once_each_is_confirmed_or_corrected_and_rescored(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        confirm(personas, SOFT_LANDING)
        ac = campaign_score(campaign=personas.campaign)[0]
        problems = evaluation_publish_problems(evaluation=ac)
        assert [p.message for p in problems] == [doubt_message("ac", 1)]

        # The organiser corrects the other: "Buzz Aldrin" is right, from nugget 1.
        judgment_edit(judgment=judgment_of("Buzz Aldrin"), user=personas.organiser,
                      changes={"correct": True, "relevant": [1]},
                      reason="Aldrin also walked on the Moon", note="accept D002")
        ac, pr = campaign_score(campaign=personas.campaign)
        for evaluation in (ac, pr):
            publication = evaluation_publish(evaluation=evaluation, user=personas.organiser)
            assert publication.override is None

        assert published() == {("ac", ac.pk), ("pr", pr.pk)}
        assert not PublishOverride.objects.exists()
        seen = boards(personas, "participant_b")
        assert (seen["ac"]["evaluation"], seen["pr"]["evaluation"]) == (ac.pk, pr.pk)
        # All three answers are now correct (tests/scoring/test_scoring_api.py works it out).
        assert seen["ac"]["rows"][0]["accuracy"] == 1.0

    def test_force_publishes_over_the_doubt_and_records_who_when_and_how_many(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        ac, _pr = doubted

        publication = evaluation_publish(evaluation=ac, user=personas.organiser, force=True)

        ac.refresh_from_db()
        assert ac.published_at is not None and ac.published_by_id == personas.organiser.pk
        override = PublishOverride.objects.get()
        assert override == publication.override
        assert (override.evaluation_id, override.published_by_id, override.published_at) == (
            ac.pk, personas.organiser.pk, ac.published_at)
        assert (override.doubtful_unreviewed, override.review_below) == (2, 0.8)
        assert sorted(override.judgments) == sorted(
            [judgment_of(SOFT_LANDING).pk, judgment_of("Buzz Aldrin").pk])
        seen = boards(personas, "participant_a")
        assert seen.keys() == {"ac"}
        assert_toy_ac_scores(seen["ac"]["rows"][0])

    def test_the_override_stays_on_record_when_the_snapshot_is_withdrawn(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        ac, _pr = doubted
        evaluation_publish(evaluation=ac, user=personas.organiser, force=True)

        assert personas.client("organiser").delete(publish_url("ac")).status_code == 204

        assert published() == set()
        assert PublishOverride.objects.get().evaluation_id == ac.pk

    def test_withdrawing_a_track_that_does_not_exist_is_a_404(self, personas: Personas,
                                                              doubted: Any) -> None:
        response = personas.client("organiser").delete(publish_url("no-such-track"))

        assert response.status_code == 404
        assert response.json()["detail"] == "No track 'no-such-track' in toy."

    @pytest.mark.parametrize(("confidence", "refused"), [
        (0.79, True), (0.8, False), (None, False)])
    def test_doubt_is_a_measured_confidence_under_the_threshold(
        self, personas: Personas, doubted: list[Evaluation], confidence: float | None,
        refused: bool,
    ) -> None:
        # No edit, so nothing goes stale: only the judge's own probability changes.
        Judgment.objects.filter(pk__in=[judgment_of(t).pk for t in DOUBT]).update(
            confidence=confidence)
        ac, _pr = doubted

        problems = evaluation_publish_problems(evaluation=ac)

        assert [p.message for p in problems] == ([doubt_message("ac", 2)] if refused else [])

    def test_the_threshold_is_the_campaigns(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        personas.campaign.review_below = 0.65  # 0.6 is under it, 0.7 no longer
        personas.campaign.save()
        ac = Evaluation.objects.get(pk=doubted[0].pk)

        problems = evaluation_publish_problems(evaluation=ac)

        assert [p.message for p in problems] == [DOUBTFUL_NOT_REVIEWED.format(
            count=1, track="ac", threshold=0.65, url=REVIEW_QUEUE)]


class TestStaleness:
    def test_an_edit_after_scoring_makes_every_snapshot_stale_even_for_force(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        # No worker runs here: nothing rescored after the edit.
        assert [b["stale"] for b in boards(personas, "organiser").values()] == [False, False]
        judgment_edit(judgment=judgment_of("Buzz Aldrin"), user=personas.organiser,
                      changes={"correct": True, "relevant": [1]},
                      reason="Aldrin also walked on the Moon", note="accept D002")

        assert [b["stale"] for b in boards(personas, "organiser").values()] == [True, True]
        for evaluation in scored:
            for force in (False, True):
                with pytest.raises(PublishRefused) as refused:
                    evaluation_publish(evaluation=evaluation, user=personas.organiser,
                                       force=force)
                assert [p.message for p in refused.value.problems] == [
                    stale_message(evaluation)]
                assert not refused.value.waivable
        assert published() == set()
        assert not PublishOverride.objects.exists()

        ac, pr = campaign_score(campaign=personas.campaign)
        assert [b["stale"] for b in boards(personas, "organiser").values()] == [False, False]
        evaluation_publish(evaluation=ac, user=personas.organiser)
        evaluation_publish(evaluation=pr, user=personas.organiser)
        assert published() == {("ac", ac.pk), ("pr", pr.pk)}
        assert boards(personas, "participant_a")["ac"]["rows"][0]["accuracy"] == 1.0

    def test_an_edit_stamped_by_a_clock_behind_the_workers_still_makes_it_stale(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        # The web server that takes the edit and the worker that scored need not agree on
        # the time: staleness is decided by the edits a snapshot counted, not by clocks.
        ac, _pr = scored
        judgment_edit(judgment=judgment_of(ESA_LAUNCH), user=personas.organiser,
                      changes={"entailed": True}, reason="", note="the passage says so")
        JudgmentEdit.objects.update(edited_at=ac.computed_at - timedelta(minutes=5))

        assert boards(personas, "organiser")["ac"]["stale"] is True
        with pytest.raises(PublishRefused):
            evaluation_publish(evaluation=ac, user=personas.organiser, force=True)
        assert published() == set()

    def test_a_published_snapshot_says_it_is_stale_to_those_who_see_it(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        ac, _pr = scored
        evaluation_publish(evaluation=ac, user=personas.organiser)
        assert boards(personas, "participant_b")["ac"]["stale"] is False

        confirm(personas, "Buzz Aldrin")

        # Still published (withdrawing is the organiser's call), and marked.
        board = boards(personas, "participant_b")["ac"]
        assert (board["evaluation"], board["published"], board["stale"]) == (ac.pk, True, True)


class TestPublishLeaderboardsCommand:
    def test_it_prints_why_it_refuses_and_publishes_no_track(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        stderr = io.StringIO()
        with pytest.raises(CommandError) as refused:
            call_command("publish_leaderboards", "toy", "--as", "olga", stderr=stderr)

        assert str(refused.value) == REFUSED.format(tracks="ac, pr")
        assert stderr.getvalue().splitlines() == [
            doubt_message("ac", 2) + FORCE_HINT, doubt_message("pr", 2) + FORCE_HINT]
        assert published() == set()
        assert boards(personas, "participant_a") == {}

    def test_one_refused_track_publishes_nothing_at_all(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        # After an edit only the PR track is rescored: its snapshot counts the edit, the
        # AC one does not.
        confirm(personas, ESA_LAUNCH)
        scoring = CampaignScoring(
            campaign=personas.campaign,
            judgment_edits_seen=judgment_edit_count(campaign=personas.campaign))
        assert scoring.qrels == campaign_qrels(campaign=personas.campaign)
        pr = pr_track(track=personas.campaign.tracks.get(slug="pr"), scoring=scoring)
        stderr = io.StringIO()

        with pytest.raises(CommandError) as refused:
            call_command("publish_leaderboards", "toy", "--as", "olga", stderr=stderr)

        assert str(refused.value) == REFUSED.format(tracks="ac")
        assert stderr.getvalue().splitlines() == [stale_message(scored[0])]
        assert published() == set()  # not even the PR track
        out, _ = run_command("publish_leaderboards", "toy", "--track", "pr", "--as", "olga")
        assert out.startswith("track pr: published the scores of ")
        assert published() == {("pr", pr.pk)}

    def test_force_publishes_and_says_it_was_recorded(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        out, err = run_command("publish_leaderboards", "toy", "--track", "ac", "--as", "olga",
                               "--force")

        ac, _pr = doubted
        stamp = f"{ac.computed_at:%Y-%m-%d %H:%M}"
        assert out.splitlines() == [
            f"track ac: published the scores of {stamp} UTC",
            FORCED.format(track="ac", count=2, threshold=0.8, username="olga")]
        assert err == ""
        assert published() == {("ac", ac.pk)}
        override = PublishOverride.objects.get()
        assert (override.evaluation_id, override.published_by_id,
                override.doubtful_unreviewed) == (ac.pk, personas.organiser.pk, 2)
        assert_toy_ac_scores(boards(personas, "participant_b")["ac"]["rows"][0])

    def test_force_does_not_publish_stale_scores(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        confirm(personas, ESA_LAUNCH)
        stderr = io.StringIO()

        with pytest.raises(CommandError) as refused:
            call_command("publish_leaderboards", "toy", "--track", "ac", "--as", "olga",
                         "--force", stderr=stderr)

        assert str(refused.value) == REFUSED.format(tracks="ac")
        assert stderr.getvalue().splitlines() == [stale_message(scored[0])]
        assert published() == set()

        run_command("score", "toy")
        out, _ = run_command("publish_leaderboards", "toy", "--track", "ac", "--as", "olga")
        assert out.startswith("track ac: published the scores of ")
        assert boards(personas, "participant_a")["ac"]["stale"] is False


class TestPublishApi:
    def test_a_refusal_is_a_409_that_says_why_and_force_goes_over_doubt(
        self, personas: Personas, doubted: list[Evaluation]
    ) -> None:
        organiser = personas.client("organiser")

        response = organiser.post(publish_url("ac"))

        assert response.status_code == 409
        body: dict[str, Any] = response.json()
        problem = doubt_message("ac", 2) + API_FORCE_HINT
        assert body == {"detail": NOT_PUBLISHED.format(track="ac", slug="toy"),
                        "problems": [problem],
                        "errors": [{"field": "", "message": problem}]}
        assert published() == set()
        assert boards(personas, "participant_a") == {}

        response = organiser.post(publish_url("ac"), {"force": True}, format="json")

        assert response.status_code == 200
        ac, _pr = doubted
        assert (response.json()["evaluation"], response.json()["published"]) == (ac.pk, True)
        assert PublishOverride.objects.get().published_by_id == personas.organiser.pk
        assert boards(personas, "participant_a")["ac"]["evaluation"] == ac.pk

    def test_force_does_not_publish_stale_scores(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        organiser = personas.client("organiser")
        confirm(personas, "Buzz Aldrin")

        response = organiser.post(publish_url("ac"), {"force": True}, format="json")

        assert response.status_code == 409
        assert response.json()["problems"] == [stale_message(scored[0])]
        assert published() == set()
        assert boards(personas, "organiser")["ac"]["stale"] is True

        campaign_score(campaign=personas.campaign)
        assert boards(personas, "organiser")["ac"]["stale"] is False
        assert organiser.post(publish_url("ac")).status_code == 200
        assert boards(personas, "participant_a")["ac"]["stale"] is False

    def test_force_must_be_a_boolean(self, personas: Personas,
                                     doubted: list[Evaluation]) -> None:
        response = personas.client("organiser").post(publish_url("ac"), {"force": "perhaps"},
                                                     format="json")

        assert response.status_code == 400
        assert response.json()["errors"][0]["field"] == "force"
        assert published() == set()

    def test_the_schema_documents_force_the_409_and_stale(self, personas: Personas) -> None:
        schema = personas.client("anonymous").get(
            "/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
        post = schema["paths"]["/api/v1/campaigns/{slug}/leaderboards/{track}/publish/"]["post"]
        assert "409" in post["responses"]
        components = schema["components"]["schemas"]
        assert "force" in components["PublishRequest"]["properties"]
        assert {"detail", "problems"} <= set(components["PublishRefused"]["properties"])
        assert "stale" in components["Leaderboard"]["properties"]
