"""The pages' side of the publishing checks (docs/judging.md): the dashboard's Publish
button refuses what the command and the API refuse, saying why; the results page marks a
snapshot computed before the latest judgment edit."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.utils.html import escape

from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from scoring.models import Evaluation, PublishOverride
from scoring.selectors import DOUBTFUL_NOT_REVIEWED
from scoring.services import campaign_score
from submissions.models import Run
from tests.grading.fixtures import SOFT_LANDING, confirm
from tests.grading.rounds import round_graded
from tests.grading.scripted_server import ScriptedJudge
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

PUBLISH_AC = "/campaigns/toy/dashboard/publish/ac/"
RESULTS = "/campaigns/toy/results/"
STALE = "<strong>Stale.</strong>"
SCORE_COMMAND = "<code>python manage.py score toy</code>"


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    # Plots are cached per evaluation; database ids repeat between tests.
    cache.clear()
    yield
    cache.clear()


def graded_and_scored(run: Run, judge: OpenAIJudge) -> list[Evaluation]:
    run_grade(run=run, judge=judge)
    round_graded(run)
    return campaign_score(campaign=run.track.campaign)


def published_tracks() -> set[str]:
    return set(Evaluation.objects.filter(published_at__isnull=False)
               .values_list("track__slug", flat=True))


def test_the_publish_button_refuses_unreviewed_doubt_and_says_where_to_review(
    personas: Personas, toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge
) -> None:
    script.sure.update({SOFT_LANDING: 0.6, "Buzz Aldrin": 0.7})
    graded_and_scored(toy_ac_run, judge)
    client = signed_in(personas, "organiser")

    page = client.post(PUBLISH_AC, follow=True).content.decode()

    doubt = DOUBTFUL_NOT_REVIEWED.format(count=2, track="ac", threshold=0.8,
                                         url="/campaigns/toy/judgments/?to_review=1&doubtful=1")
    assert escape(f"The ac leaderboard was not published: {doubt}.") in page
    assert "The ac leaderboard is published." not in page
    assert published_tracks() == set()
    assert not PublishOverride.objects.exists()  # no force on the page

    # Reviewed (both confirmed) and rescored, the same button publishes.
    confirm(personas, SOFT_LANDING)
    confirm(personas, "Buzz Aldrin")
    campaign_score(campaign=personas.campaign)
    page = client.post(PUBLISH_AC, follow=True).content.decode()
    assert "The ac leaderboard is published." in page
    assert published_tracks() == {"ac"}


def test_the_publish_button_refuses_stale_scores_until_they_are_recomputed(
    personas: Personas, toy_ac_run: Run, judge: OpenAIJudge
) -> None:
    graded_and_scored(toy_ac_run, judge)
    confirm(personas, "Buzz Aldrin")
    client = signed_in(personas, "organiser")

    page = client.post(PUBLISH_AC, follow=True).content.decode()

    assert escape("The ac leaderboard was not published: the scores of track ac were "
                  "computed at ") in page
    assert escape("run `python manage.py score toy` (or wait for the worker) and publish "
                  "again.") in page
    assert published_tracks() == set()
    campaign_score(campaign=personas.campaign)
    assert "The ac leaderboard is published." in client.post(
        PUBLISH_AC, follow=True).content.decode()


def test_the_results_page_marks_stale_scores_and_tells_organisers_how_to_refresh_them(
    personas: Personas, toy_ac_run: Run, judge: OpenAIJudge
) -> None:
    ac, _pr = graded_and_scored(toy_ac_run, judge)
    organiser = signed_in(personas, "organiser")
    assert STALE not in organiser.get(RESULTS).content.decode()
    client = personas.client("organiser")
    assert client.post("/api/v1/campaigns/toy/leaderboards/ac/publish/").status_code == 200

    confirm(personas, "Buzz Aldrin")

    page = organiser.get(RESULTS).content.decode()
    assert page.count(STALE) == 2  # both tracks
    assert SCORE_COMMAND in page
    # Participants see the published snapshot marked too, without the organisers' remedy.
    seen = signed_in(personas, "participant_a").get(RESULTS).content.decode()
    assert seen.count(STALE) == 1 and "recomputed scores may replace them" in seen
    assert SCORE_COMMAND not in seen
    assert Evaluation.objects.get(published_at__isnull=False) == ac

    campaign_score(campaign=personas.campaign)
    assert STALE not in organiser.get(RESULTS).content.decode()
