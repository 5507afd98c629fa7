"""The cascade: escalated judgments go to the second judge where the guarantee lets it
decide (its own threshold from the same blind sample, each judge at half the risk), then
to people; decisions the thresholds stop covering are withdrawn."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from grading.models import BlindItem, JudgeSlot, Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from submissions.models import Run
from tests.grading.fixtures import (
    ALDRIN_COMMANDER,
    ESA_LAUNCH,
    FOURTH_PLANET,
    MARS_DIAMETER,
    SOFT_LANDING,
    judge_from_marked_example,
    make_judge,
)
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import Personas

pytestmark = pytest.mark.django_db

MISSION = "Chang'e 4 is a mission of the China National Space Administration."  # D001#2
ALDRIN_WALKED = "Buzz Aldrin walked on the Moon during the Apollo 11 mission."  # D002#1
MERCURY = "Mercury has a mean diameter of about 4,879 km."  # D003#2
CASCADE = "/api/v1/campaigns/toy/agreement/cascade/"
AGREEMENT = "/api/v1/campaigns/toy/agreement/"


def entailment_of(text: str) -> Judgment:
    """The official entailment judgment of a nugget of the toy run."""
    judgment: Judgment = Judgment.objects.filter(
        kind="entailment", input__nugget=text, nugget_links__slot=JudgeSlot.OFFICIAL).get()
    return judgment


@pytest.fixture
def two_judges(personas: Personas, toy_ac_run: Run, script: ScriptedJudge,
               judge: OpenAIJudge) -> Run:
    """The official judge sure and wrong about D001#2 (not entailed, it says); the
    second judge answers as the assessor did, sure of every verdict it is asked."""
    script.entailed[MISSION] = False
    run_grade(run=toy_ac_run, judge=judge)
    with ScriptedServer(judge_from_marked_example()) as server:
        run_grade(run=toy_ac_run, judge=make_judge(server, model="second-judge"),
                  slot=JudgeSlot.SECOND)
    campaign = personas.campaign
    campaign.agreement_target, campaign.agreement_risk = 0.5, 0.5
    campaign.save()
    return toy_ac_run


@pytest.fixture
def four_labelled(personas: Personas, two_judges: Run) -> Run:
    """A blind sample of the 8 entailments, 4 labelled as the assessor did: the official
    judge is wrong on the first of them."""
    sample = personas.client("organiser").post(
        "/api/v1/campaigns/toy/blind-samples/", {"kind": "entailment", "size": 8},
        format="json").json()
    for text in (MISSION, ALDRIN_WALKED, MARS_DIAMETER, MERCURY):
        label(personas, sample, text, True)
    return two_judges


def label(personas: Personas, sample: dict[str, Any], text: str, entailed: bool) -> None:
    [item] = [i for i in sample["items"] if i["inputs"]["nugget"] == text]
    response = personas.client("organiser").post(
        f"/api/v1/blind-items/{item['id']}/label/", {"entailed": entailed}, format="json")
    assert response.status_code == 200, response.json()


def test_the_second_judge_decides_what_the_official_one_escalates_and_its_guarantee_allows(
    personas: Personas, four_labelled: Run
) -> None:
    organiser = personas.client("organiser")
    report = organiser.get(AGREEMENT).json()["entailment"]
    # Each judge at risk 0.25: 2 agreeing labels are the fewest that can pass
    # (0.5**2 = 0.25). The official judge's two surest (0.99) disagree once:
    # P(Bin(2, .5) <= 1) = 0.75 > 0.25, so it may accept nothing; the second judge
    # agrees on all four it is asked about at 0.99: P(Bin(4, .5) <= 0) = 0.0625.
    assert report["threshold"] is None
    assert report["second_threshold"] == pytest.approx(0.99)

    decided = organiser.post(CASCADE).json()
    # Unlabelled and escalated: the soft landing and the fourth planet (the second
    # judge sure at 0.99), and the two the names-and-numbers rule decided at 0.967,
    # under the second judge's threshold: those stay with people.
    assert decided == {"decided": 2, "withdrawn": 0}
    for text in (SOFT_LANDING, FOURTH_PLANET):
        judgment = entailment_of(text)
        assert judgment.decided_by_second_judge and judgment.edited_by is None
        assert judgment.label == {"entailed": True}
        edit = JudgmentEdit.objects.get(judgment=judgment)
        assert edit.note.startswith("Decided by the second judge (second-judge): its "
                                    "confidence 0.990 is at or above its threshold 0.990")
    report = organiser.get(AGREEMENT).json()["entailment"]
    assert (report["by_second_judge"], report["by_people"], report["unreviewed"]) == (2, 4, 2)
    escalated = organiser.get("/api/v1/campaigns/toy/judgments/?escalated=1&reviewed=0").json()
    assert {i["id"] for i in escalated["results"]} == {
        entailment_of(ESA_LAUNCH).pk, entailment_of(ALDRIN_COMMANDER).pk}
    assert organiser.post(CASCADE).json() == {"decided": 0, "withdrawn": 0}


def test_a_decision_the_thresholds_stop_covering_is_withdrawn(
    personas: Personas, four_labelled: Run
) -> None:
    organiser = personas.client("organiser")
    assert organiser.post(CASCADE).json() == {"decided": 2, "withdrawn": 0}

    # A stricter target: four labels can no longer show it (0.95**4 > 0.25).
    personas.campaign.agreement_target = 0.95
    personas.campaign.save()
    assert organiser.post(CASCADE).json() == {"decided": 0, "withdrawn": 2}
    landing = entailment_of(SOFT_LANDING)
    assert not landing.decided_by_second_judge and landing.edited_label is None
    assert landing.label == landing.llm_label
    assert JudgmentEdit.objects.filter(
        judgment=landing, note__startswith="The second judge's decision is withdrawn").exists()
    assert organiser.get(AGREEMENT).json()["entailment"]["by_second_judge"] == 0
    assert BlindItem.objects.filter(label__isnull=False).count() == 4


@pytest.mark.parametrize("who", ["participant_a", "outsider"])
def test_no_one_but_the_organisers_may_run_the_cascade(
    personas: Personas, two_judges: Run, who: str
) -> None:
    assert personas.client(who).post(CASCADE).status_code == 404


def test_the_dashboard_shows_the_second_judges_threshold_and_runs_the_cascade(
    personas: Personas, four_labelled: Run
) -> None:
    browser = Client()
    browser.force_login(User.objects.get(pk=personas.organiser.pk))
    page = browser.get("/campaigns/toy/dashboard/").content.decode()
    assert ("<dt>Second judge</dt><dd>decides the escalated judgments it is 0.990 or more "
            "sure of; 0 decided</dd>") in page
    response = browser.post("/campaigns/toy/agreement/cascade/", follow=True)
    assert "The second judge decided 2 escalated judgment(s)" in response.content.decode()
    assert entailment_of(SOFT_LANDING).decided_by_second_judge
    outsider = Client()
    outsider.force_login(User.objects.get(pk=personas.outsider.pk))
    assert outsider.post("/campaigns/toy/agreement/cascade/").status_code == 404
