"""`GET /api/v1/campaigns/{slug}/rubric-qrels/?track=SLUG` (docs/measures.md):
trec_eval qrels `qid 0 docid label` of every graded passage, label 0 included; for
organisers always, for everyone else once the track's leaderboard is theirs to see
(docs/access.md: until then, 404 as if it did not exist)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from scoring.services import campaign_score
from tests.factories import TrackFactory
from tests.scoring.rubric_case import rubric_case
from tests.scoring.support import PERSONAS, publish_url
from tests.support import Personas

URL = "/api/v1/campaigns/toy/rubric-qrels/?track=dl"

# tests/scoring/rubric_case.py, label max: the highest grade of each passage in the pool
# (the top 3 of each run; d8 is below, d9's query D003 has no items, so no grade).
HAND_QRELS_MAX = """\
D001 0 d1 5
D001 0 d2 1
D001 0 d3 4
D001 0 d4 0
D002 0 d5 4
D002 0 d6 2
D002 0 d7 0
"""
# label count at min_grade 2: how many of the query's items grade the passage >= 2
# (d1: A 5, B 2; d3: A 3, B 4; d5: C 4, E 3; d6: C 2 only).
HAND_QRELS_COUNT = """\
D001 0 d1 2
D001 0 d2 0
D001 0 d3 2
D001 0 d4 0
D002 0 d5 2
D002 0 d6 1
D002 0 d7 0
"""


def _get(personas: Personas, who: str, url: str = URL) -> tuple[int, str]:
    response = personas.client(who).get(url)
    return response.status_code, response.content.decode()


def test_the_qrels_equal_the_hand_computed_labels(personas: Personas) -> None:
    rubric_case(personas)
    status, text = _get(personas, "organiser")
    assert status == 200
    assert text == HAND_QRELS_MAX


def test_the_count_label_counts_the_items_at_the_threshold(personas: Personas) -> None:
    rubric_case(personas, label="count", min_grade=2)
    assert _get(personas, "organiser") == (200, HAND_QRELS_COUNT)


def test_the_qrels_are_plain_text(personas: Personas) -> None:
    rubric_case(personas)
    response = personas.client("organiser").get(URL)
    assert response["Content-Type"] == "text/plain; charset=utf-8"


def test_only_organisers_see_them_before_publication(personas: Personas) -> None:
    rubric_case(personas)
    campaign_score(campaign=personas.campaign)  # a snapshot, not published
    assert _get(personas, "organiser")[0] == 200
    for who in PERSONAS[1:]:
        assert _get(personas, who)[0] == 404, who


def test_participants_see_them_once_published_and_the_public_once_released(
    personas: Personas
) -> None:
    rubric_case(personas)
    campaign_score(campaign=personas.campaign)
    published = personas.client("organiser").post(publish_url("dl"), {}, format="json")
    assert published.status_code == 200, published.json()

    seen = {who: _get(personas, who) for who in PERSONAS}
    assert seen["participant_a"] == seen["participant_b"] == (200, HAND_QRELS_MAX)
    assert seen["outsider"][0] == seen["anonymous"][0] == 404  # results not released

    campaign = personas.campaign
    campaign.results_release = timezone.now() - timedelta(minutes=1)
    campaign.save()
    for who in ("outsider", "anonymous"):
        assert _get(personas, who) == (200, HAND_QRELS_MAX), who


def test_others_get_the_published_snapshots_qrels_organisers_the_current_ones(
    personas: Personas
) -> None:
    case = rubric_case(personas)
    campaign_score(campaign=personas.campaign)
    personas.client("organiser").post(publish_url("dl"), {}, format="json")
    judgment = case.judgments["d4", "A"]
    judgment.edited_label = {"grade": 3, "answer": "edited"}
    judgment.save()

    assert _get(personas, "participant_a") == (200, HAND_QRELS_MAX)
    current = HAND_QRELS_MAX.replace("D001 0 d4 0", "D001 0 d4 3")
    assert _get(personas, "organiser") == (200, current)


def test_an_unknown_campaign_is_404(personas: Personas) -> None:
    rubric_case(personas)
    status, _ = _get(personas, "organiser", "/api/v1/campaigns/nope/rubric-qrels/?track=dl")
    assert status == 404


@pytest.mark.parametrize(("query", "says"), [
    ("", "name a ranking or response track: ?track=SLUG"),
    ("?track=", "name a ranking or response track: ?track=SLUG"),
    ("?track=nope", "toy has no track 'nope'; its ranking/response tracks: dl"),
    ("?track=ac", "track ac of toy is of kind ac; Rubric-Qrels and graded passages belong "
                  "to ranking/response tracks: dl"),
])
@pytest.mark.parametrize("who", ["organiser", "participant_a", "anonymous"])
def test_a_missing_unknown_or_r2c2_track_is_400_naming_track(
    personas: Personas, query: str, says: str, who: str
) -> None:
    rubric_case(personas)
    TrackFactory.create(campaign=personas.campaign, slug="ac", kind="ac")
    response = personas.client(who).get(f"/api/v1/campaigns/toy/rubric-qrels/{query}")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "track", "message": says}]
