"""The track-kind registry (campaign/kinds.py): adding a kind is one entry, and every layer
takes a run of it through (naming, storing, grading in rounds, scoring), as the measure
catalogue's test adds P@1 with one entry."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaign.kinds import KINDS, kind_of, kinds, register
from campaign.models import Track
from grading.work.claims import part_claim
from grading.work.part_grading import part_grading
from grading.work.rounds import rounds_start
from scoring.models import RunScore
from scoring.services import campaign_score
from submissions.models import Run, RunStatus
from tests.campaign import toy_kind
from tests.support import Personas

pytestmark = pytest.mark.django_db

TOY = "tests.campaign.toy_kind"


@pytest.fixture
def toy(personas: Personas) -> Iterator[Track]:
    """The toy kind registered (as graded as AC, in one part, its own deadline), and a track."""
    before = dict(KINDS)
    register(replace(kind_of("ac"), value="toy", in_parts=False, second_judge=False,
                     answers=False, noun="toy", run_names="[Team]-toy", team_of=f"{TOY}.team_of",
                     store=f"{TOY}.store", grader=f"{TOY}.grade", scorer=f"{TOY}.score",
                     archive=f"{TOY}.archive", replay=""))
    toy_kind.CALLS.clear()
    track = Track.objects.create(campaign=personas.campaign, slug="toys", kind="toy")
    yield track
    KINDS.clear()
    KINDS.update(before)


def test_every_layer_takes_a_run_of_a_kind_registered_with_one_entry(
    personas: Personas, toy: Track,
) -> None:
    assert "toy" in kinds(graded=True) and "toy" not in kinds(rubric=True)
    response = personas.client("participant_a").post(
        "/api/v1/campaigns/toy/runs/", {"track": "toys", "name": "WASEDA-toy",
                                        "file": SimpleUploadedFile("r", b"D001 d1\nD002 d2\n")},
        format="multipart")
    assert response.status_code == 201, response.json()
    run = Run.objects.get(pk=response.json()["id"])
    assert (run.status, run.questions, run.records) == (RunStatus.VALID, 2, 2)

    [part_id] = rounds_start(run_ids=[run.pk])  # graded: it gets a round of one part
    part = part_claim(part_id=part_id, token="task-1")
    assert part is not None
    outcome = part_grading(part=part, token="task-1", queue_scoring=False)
    assert outcome.run_graded and Run.objects.get(pk=run.pk).status == RunStatus.GRADED

    evaluations = campaign_score(campaign=personas.campaign)
    [toys] = [e for e in evaluations if e.track_id == toy.pk]
    assert RunScore.objects.get(evaluation=toys).aggregates == {"passages": 2.0}
    assert toy_kind.CALLS == ["named WASEDA-toy", "stored WASEDA-toy", "graded WASEDA-toy",
                              "scored toys"]


def test_a_name_the_kind_refuses_is_refused_in_its_words(personas: Personas, toy: Track) -> None:
    response = personas.client("participant_a").post(
        "/api/v1/campaigns/toy/runs/", {"track": "toys", "name": "WASEDA-AC-1",
                                        "file": SimpleUploadedFile("r", b"D001 d1\n")},
        format="multipart")
    assert response.status_code == 400
    assert "expected [Team]-toy" in str(response.json())


def test_an_unknown_fact_is_an_error_not_an_empty_list() -> None:
    with pytest.raises(TypeError, match="no such fact of a kind: colour"):
        kinds(colour=True)
