"""Calibration fits and the expected calibration error, on cases worked out by hand."""

from __future__ import annotations

import json
import math

import pytest

from grading.validation.calibration import (
    JudgeCalibration,
    expected_calibration_error,
    fit_isotonic,
    fit_judge,
    fit_platt,
    out_of_fold,
)


def test_isotonic_pools_adjacent_violators():
    # Zadrozny and Elkan 2002, pooled adjacent violators: outcomes 1, 0, 1, 1 in order of
    # confidence; the 1 before the 0 violates the order, so both become their mean 0.5.
    fit = fit_isotonic([0.6, 0.7, 0.8, 0.9], [True, False, True, True])

    assert fit.values == (0.5, 0.5, 1.0, 1.0)
    assert (fit(0.55), fit(0.65), fit(0.7), fit(0.85), fit(1.0)) == (0.5, 0.5, 0.5, 1.0, 1.0)


def test_isotonic_weighs_a_confidence_by_how_many_items_share_it():
    # 0.6: 1 of 1 agreed; 0.9: 1 of 2. The violation pools them, weighted by count:
    # (1 x 1.0 + 2 x 0.5) / 3 = 2/3.
    fit = fit_isotonic([0.9, 0.9, 0.6], [True, False, True])

    assert fit.thresholds == (0.6, 0.9)
    assert fit.values == pytest.approx((2 / 3, 2 / 3))


def test_platt_on_one_confidence_learns_the_accuracy():
    # Platt 1999 with every logit 0: only the intercept moves, to logit(3/4) = ln 3.
    fit = fit_platt([0.5] * 4, [True, True, True, False])

    assert fit.b == pytest.approx(math.log(3), abs=1e-5)
    assert fit(0.5) == pytest.approx(0.75, abs=1e-6)


def test_platt_on_two_confidences_fits_both_exactly():
    # Logits +-ln 4 (confidences 0.8 and 0.2) with accuracies 3/4 and 1/4: two
    # parameters, two levels, so a ln 4 + b = ln 3 and -a ln 4 + b = -ln 3:
    # b = 0 and a = ln 3 / ln 4 = 0.7925.
    fit = fit_platt([0.8] * 4 + [0.2] * 4,
                    [True, True, True, False, True, False, False, False])

    assert (fit.a, fit.b) == (pytest.approx(math.log(3) / math.log(4), abs=1e-5),
                              pytest.approx(0.0, abs=1e-5))
    assert fit(0.8) == pytest.approx(0.75, abs=1e-6)


def test_expected_calibration_error_is_the_weighted_gap_per_bin():
    # Guo et al. 2017: bin [0.9, 1.0) holds two items of confidence 0.9, half agreed
    # (gap 0.4); bin [0.6, 0.7) two of 0.6, both agreed (gap 0.4); each weighs 2/4.
    assert expected_calibration_error([0.9, 0.9, 0.6, 0.6], [True, False, True, True]) == (
        pytest.approx(0.4))
    # A confidence of exactly 1 is in the last bin, with the 0.95: mean 0.975, accuracy 1.
    assert expected_calibration_error([1.0, 0.95], [True, True]) == pytest.approx(0.025)
    assert expected_calibration_error([0.75, 0.25], [True, False], bins=2) == (
        pytest.approx(0.25))


def test_out_of_fold_never_calibrates_an_item_with_a_fit_that_saw_it():
    # Folds by position: items 0 and 2, items 1 and 3. Fold 0 is calibrated by the fit on
    # (0.7, no), (0.9, yes): 0.6 lies below its first step (0), 0.8 on the step of 0.7 (0).
    # Fold 1 by the fit on (0.6, yes), (0.8, yes): 1 everywhere.
    calibrated = out_of_fold([0.6, 0.7, 0.8, 0.9], [True, False, True, True], folds=2,
                             fit=fit_isotonic)

    assert calibrated == [0.0, 1.0, 0.0, 1.0]


def test_bad_input_is_refused_with_what_was_expected():
    with pytest.raises(ValueError, match="as many outcomes as confidences"):
        fit_isotonic([0.5], [])
    with pytest.raises(ValueError, match="confidences from 0 to 1"):
        fit_platt([1.5], [True])
    with pytest.raises(ValueError, match="folds must be from 2 to the number of items"):
        out_of_fold([0.5, 0.6], [True, False], folds=3, fit=fit_isotonic)


def test_a_judge_is_calibrated_per_step_under_the_wording_it_was_fitted_for():
    # Entailment steps: 0.6 agreed 1 of 2, 0.9 agreed 3 of 3 (no violation, so the fit
    # is the accuracy per level); relevance: 0.8 agreed 1 of 4. A step seen under two
    # wordings is fitted under the one it was seen under most.
    samples = [("entailment", "entailment-v2", 0.6, True),
               ("entailment", "entailment-v2", 0.6, False),
               *[("entailment", "entailment-v2", 0.9, True)] * 3,
               ("entailment", "entailment-v1", 0.9, False),
               *[("relevance", "relevance-v2", 0.8, ok) for ok in (True, False, False, False)]]
    calibration = fit_judge(samples, source="tiny")

    assert calibration.steps["entailment"].items == 5
    assert calibration.step("entailment", "entailment-v2", 0.6) == 0.5
    assert calibration.step("entailment", "entailment-v2", 0.95) == 1.0
    assert calibration.step("relevance", "relevance-v2", 0.99) == 0.25
    # Another wording, or a step never fitted, has no calibrated confidence.
    assert calibration.step("entailment", "entailment-v1", 0.9) is None
    assert calibration.step("gold", "gold-v2@0.8", 0.9) is None
    again = JudgeCalibration.from_json(json.loads(json.dumps(calibration.as_json())))
    assert again == calibration
