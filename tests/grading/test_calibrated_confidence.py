"""A judge's calibration at grading time: the raw and the calibrated confidence are both
kept, per step and per judgment, and the review threshold compares the calibrated one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grading.llm.subtasks import SUBTASKS
from grading.models import JudgeValidation, Judgment
from grading.openai_judge import OpenAIJudge
from grading.r2c2.entailment_rule import RULE_PRECISION
from grading.r2c2.pipeline import run_grade
from grading.review.queue import is_doubtful
from grading.validation import calibration as calibration_module
from grading.validation.calibration import Isotonic, JudgeCalibration, StepFit
from grading.validation.services import judge_calibration
from submissions.models import Run
from tests.grading.fixtures import (
    DOUBT,
    ESA_LAUNCH,
    MARS_DIAMETER,
    SOFT_LANDING,
    judgment_of,
)
from tests.grading.scripted_server import ScriptedJudge
from tests.support import Personas

pytestmark = pytest.mark.django_db

JUDGMENTS = "/api/v1/campaigns/toy/judgments/"


def entailment_calibration(decision: str | None = None) -> JudgeCalibration:
    """Entailment steps: under 0.75 people agreed half the time, from 0.75 on 70%."""
    fit = Isotonic(thresholds=(0.5, 0.75), values=(0.5, 0.7))
    chosen = decision or SUBTASKS["entailment"].decision
    return JudgeCalibration(steps={"entailment": StepFit(chosen, 40, fit)}, source="test")


@pytest.fixture
def calibrated(toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge) -> Run:
    script.sure.update(DOUBT)
    judge.calibration = entailment_calibration()
    run_grade(run=toy_ac_run, judge=judge)
    return toy_ac_run


def test_raw_and_calibrated_confidences_are_both_stored(calibrated: Run) -> None:
    landing, diameter = judgment_of(SOFT_LANDING), judgment_of(MARS_DIAMETER)
    assert (landing.confidence, landing.calibrated_confidence) == (
        pytest.approx(0.6), pytest.approx(0.5))
    assert (diameter.confidence, diameter.calibrated_confidence) == (
        pytest.approx(0.9), pytest.approx(0.7))
    assert diameter.steps[0]["calibrated"] == pytest.approx(0.7)
    # The names-and-numbers rule is as sure as it was measured to be: its own precision.
    ruled = judgment_of(ESA_LAUNCH)
    assert ruled.calibrated_confidence == pytest.approx(RULE_PRECISION)
    # No fit for the answer's steps: no calibrated confidence, the raw one stays.
    mars = judgment_of("Mars")
    assert mars.calibrated_confidence is None and mars.confidence == pytest.approx(0.75)


def test_the_review_threshold_compares_the_calibrated_confidence(
    personas: Personas, calibrated: Run
) -> None:
    # Mars's diameter: the judge said 0.9 (above the 0.8 threshold), but labels it gives
    # at 0.9 were right 70% of the time: doubtful, and explained for the reviewer.
    diameter = judgment_of(MARS_DIAMETER)
    assert is_doubtful(judgment=diameter, campaign=diameter.campaign)
    assert diameter.reason == "scripted"
    doubtful = personas.client("organiser").get(f"{JUDGMENTS}?doubtful=1").json()["results"]
    listed = {(i["kind"], i["qid"], i.get("nugget_num")) for i in doubtful}
    assert ("entailment", "D003", 1) in listed
    item = next(i for i in doubtful if (i["qid"], i.get("nugget_num")) == ("D003", 1))
    assert (item["confidence"], item["calibrated_confidence"]) == (
        pytest.approx(0.9), pytest.approx(0.7))
    # Ordered by the calibrated confidence where there is one, least sure first.
    compared = [i["confidence"] if i["calibrated_confidence"] is None
                else i["calibrated_confidence"] for i in doubtful]
    assert compared == sorted(compared) and compared[0] == pytest.approx(0.5)


def test_a_fit_for_another_wording_calibrates_nothing(
    toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge
) -> None:
    script.sure.update(DOUBT)
    judge.calibration = entailment_calibration(decision="entailment-v0")
    run_grade(run=toy_ac_run, judge=judge)

    landing = judgment_of(SOFT_LANDING)
    assert landing.confidence == pytest.approx(0.6) and landing.calibrated_confidence is None


def test_grading_takes_the_latest_validations_calibration_else_the_packaged_one(
    personas: Personas, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    campaign = personas.campaign
    packaged = tmp_path / "calibrations.json"
    packaged.write_text(json.dumps({"m": entailment_calibration().as_json()}))
    monkeypatch.setattr(calibration_module, "PACKAGED_CALIBRATIONS", packaged)
    assert judge_calibration(campaign=campaign, judge_model="m") == entailment_calibration()
    assert judge_calibration(campaign=campaign, judge_model="other") is None

    fitted = JudgeCalibration(steps=entailment_calibration().steps, source="validation #1")
    for kept in (fitted.as_json(), {}):  # the newest kept no calibration
        JudgeValidation.objects.create(
            campaign=campaign, judge="official", judge_model="m", set_name="s",
            set_sha256="0" * 64, calibration=kept, passed=True)
    assert judge_calibration(campaign=campaign, judge_model="m") == fitted
    assert Judgment.objects.count() == 0
