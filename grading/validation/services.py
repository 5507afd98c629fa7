"""Writes and checks for judge validation: run one and keep it; may this judge grade?"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser

from campaign.models import Campaign
from grading.judge import Judge
from grading.llm.subtasks import prompt_versions
from grading.models import JudgeValidation
from grading.validation.calibration import JudgeCalibration, packaged_calibration
from grading.validation.gate import NO_VALIDATION, VALIDATION_FAILED, failures
from grading.validation.labelled import LabelledSet
from grading.validation.runner import validate_judge


def judge_validation_run(
    *, campaign: Campaign, judge: Judge, judge_name: str, labelled: LabelledSet,
    user: AbstractBaseUser | None = None, on_judged: Callable[[], None] | None = None,
) -> JudgeValidation:
    """Measure `judge` on `labelled` and keep the figures, against the campaign's bar."""
    result = validate_judge(judge, labelled, on_judged=on_judged)
    missed = failures(result.figures, campaign.judge_thresholds)
    validation = JudgeValidation.objects.create(
        campaign=campaign, judge=judge_name, judge_model=judge.identity.model,
        prompt_versions=prompt_versions(), set_name=labelled.name,
        set_sha256=labelled.sha256, figures=result.figures, outcomes=result.outcomes,
        failures=missed, passed=not missed, created_by_id=user.pk if user else None,
    )
    if result.calibration is not None:
        # Grading uses it from now on (`judge_calibration`); the source names the set.
        source = f"validation #{validation.pk} on {result.calibration.source}"
        named = JudgeCalibration(steps=result.calibration.steps, source=source)
        validation.calibration = named.as_json()
        validation.save(update_fields=["calibration"])
    return validation


def latest_validation(*, campaign: Campaign, judge_model: str) -> JudgeValidation | None:
    """The newest validation of `judge_model` under the prompt versions in use now."""
    return (JudgeValidation.objects
            .filter(campaign=campaign, judge_model=judge_model,
                    prompt_versions=prompt_versions())
            .order_by("-created_at", "-id").first())


def grading_refusal(*, campaign: Campaign, judge_model: str) -> str:
    """Why `judge_model` may not grade this campaign yet; "" when it may. Checked against the
    `judge_thresholds` as they are now, so raising one takes effect at once."""
    if not campaign.judge_thresholds:
        return ""
    validation = latest_validation(campaign=campaign, judge_model=judge_model)
    if validation is None:
        versions = ", ".join(f"{k} {v}" for k, v in sorted(prompt_versions().items()))
        return NO_VALIDATION.format(slug=campaign.slug, model=judge_model, versions=versions)
    missed = failures(validation.figures, campaign.judge_thresholds)
    if not missed:
        return ""
    return VALIDATION_FAILED.format(slug=campaign.slug, model=judge_model, id=validation.pk,
                                    when=f"{validation.created_at:%Y-%m-%d %H:%M} UTC",
                                    failures="; ".join(missed))


def judge_calibration(*, campaign: Campaign | None, judge_model: str
                      ) -> JudgeCalibration | None:
    """The calibration grading uses for `judge_model`: the one fitted by the campaign's
    latest validation of it under the prompt versions in use, else the packaged one.
    A step whose wording changed since the fit stays uncalibrated (JudgeCalibration)."""
    if campaign is not None:
        validation = (JudgeValidation.objects
                      .filter(campaign=campaign, judge_model=judge_model)
                      .exclude(calibration={}).order_by("-created_at", "-id").first())
        if validation is not None:
            return JudgeCalibration.from_json(validation.calibration)
    return packaged_calibration(judge_model)
