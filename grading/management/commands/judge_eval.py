"""`python manage.py judge_eval SLUG [--set FILE] [--judge official|second|MODEL]`: measure a
judge on a labelled set and keep its figures; exits 1 below the campaign's thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg
from campaign.management.progress import progress_bar
from grading.models import JudgeValidation
from grading.setup import UnknownJudge, judge_named
from grading.validation.labelled import DEV_SET, LabelledSetError, read_labelled_set
from grading.validation.services import judge_validation_run

PASS_TITLES = {"entailment": "entailment (bogus nuggets)",
               "answer_gold": "answer check with gold answers",
               "answer_nuggets": "answer check from the nuggets alone"}


def _number(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def report_lines(validation: JudgeValidation) -> list[str]:
    """The figures of a validation as the command prints them."""
    lines = [f"Judge {validation.judge_model} ({validation.judge}) on {validation.set_name} "
             f"(sha256 {validation.set_sha256[:12]})"]
    for section, title in PASS_TITLES.items():
        figures = validation.figures.get(section)
        if not figures:
            continue
        lines.append(f"  {title}: {figures['items']} items")
        lines.append(f"    accuracy {_number(figures['accuracy'])}, kappa "
                     f"{_number(figures['kappa'])}, unanswered {figures['unanswered']}")
        if "bogus_precision" in figures:
            lines.append(f"    bogus precision {_number(figures['bogus_precision'])}, "
                         f"recall {_number(figures['bogus_recall'])}")
        if "exact_relevant_set" in figures:
            lines.append(f"    exact relevant set {_number(figures['exact_relevant_set'])} "
                         f"(of {figures['relevant_sets']} correct answers with nuggets)")
        if "ece_raw" in figures:
            lines.append(f"    calibration error (ECE): raw {_number(figures['ece_raw'])}, "
                         f"calibration in use {_number(figures['ece_calibrated'])}, "
                         f"refitted out of fold {_number(figures['ece_refit'])}")
        lines.append(f"    {_number(figures['judgments_per_second'], 2)} judgments/s, "
                     f"{_number(figures['tokens_per_judgment'], 0)} tokens/judgment, "
                     f"{figures['decided_by_rule']} decided by rule")
        for category, by in figures["by_category"].items():
            lines.append(f"      {category:<24} {by['items']:>4} items  "
                         f"accuracy {_number(by['accuracy'])}")
    if validation.calibration:
        lines.append(f"Calibration kept for grading: {validation.calibration['source']}")
    verdict = "passed" if validation.passed else "FAILED"
    lines.append(f"Validation #{validation.pk}: {verdict} the campaign's thresholds"
                 if validation.campaign.judge_thresholds else
                 f"Validation #{validation.pk} kept (the campaign sets no thresholds)")
    lines += [f"  {failure}" for failure in validation.failures]
    return lines


class Command(BaseCommand):
    help = "Measure a judge on a labelled set and keep the figures for the campaign."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the campaign")
        parser.add_argument("--set", type=Path, default=DEV_SET,
                            help="a labelled set, JSON Lines (default: the project's dev set)")
        parser.add_argument("--judge", default="official",
                            help="official, second, or a packaged model name")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        try:
            labelled = read_labelled_set(options["set"])
        except LabelledSetError as error:
            raise CommandError(str(error)) from None
        try:
            judge = judge_named(campaign, options["judge"])
        except UnknownJudge as error:
            raise CommandError(str(error)) from None
        answers = len(labelled.answers)
        total = len(labelled.entailment) + 2 * answers
        with progress_bar(desc=options["judge"], unit="judgment", total=total) as bar:

            def judged() -> None:
                bar.update()

            validation = judge_validation_run(
                campaign=campaign, judge=judge, judge_name=options["judge"],
                labelled=labelled, on_judged=judged)
        self.stdout.write("\n".join(report_lines(validation)))
        if not validation.passed:
            raise CommandError(f"the judge missed campaign {campaign.slug}'s thresholds")
