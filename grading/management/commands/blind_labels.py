"""`python manage.py blind_labels SLUG --as USER --labels FILE [--draw KIND:SIZE ...] [--seed N]
[--settle-escalated]`: label blind samples from a file, let the second judge decide, print the
agreement report (docs/agreement.md, "6. Label files")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from campaign.management.lookup import campaign_arg, user_arg
from grading.agreement.cascade import cascade_to_second_judge, fitted_label
from grading.agreement.label_files import LabelFileError, labels_by_judgment, read_label_file
from grading.agreement.report import KindAgreement, agreement_report
from grading.agreement.samples import SampleRefused, blind_item_label, blind_sample_draw
from grading.models import BlindItem
from grading.review.edits import EditRefused, judgment_edit
from grading.review.queue import escalation_filter, official_judgments

SETTLED_NOTE = "Settled from a label file (blind_labels --settle-escalated)"


def _draws(values: list[str]) -> list[tuple[str, int]]:
    draws = []
    for value in values:
        kind, _, size = value.partition(":")
        if not size.isdigit():
            raise CommandError(f"--draw {value}: expected KIND:SIZE, e.g. entailment:40")
        draws.append((kind, int(size)))
    return draws


def report_lines(lines: list[KindAgreement]) -> list[str]:
    """The agreement report as the command prints it."""
    out = []
    for line in lines:
        head = f"  {line.kind}: {line.n} labelled"
        if line.n and line.interval:
            low, high = line.interval
            kappa = "-" if line.kappa is None else f"{line.kappa:.3f}"
            head += (f", agreement {line.agreed}/{line.n} = {line.agreement:.3f} "
                     f"[{low:.3f}, {high:.3f}], kappa {kappa}")
        out.append(head)
        if line.threshold is not None and line.threshold.value is not None:
            out.append(f"    accepted at confidence >= {line.threshold.value:.3f}: "
                       f"{line.accepted} of {line.judgments} (coverage {line.coverage:.3f})")
        else:
            out.append(f"    nothing accepted: {line.reason}")
        if line.second is not None:
            out.append("    second judge: " + (
                f"decides at confidence >= {line.second.value:.3f}"
                if line.second.value is not None else line.second.reason)
                + f", {line.by_second_judge} decided")
        out.append(f"    escalated {line.escalated}, unreviewed {line.unreviewed}, "
                   f"settled by people {line.by_people}")
    return out


class Command(BaseCommand):
    help = "Draw blind samples, label them from a file, and report agreement with people."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--as", dest="username", required=True,
                            help="the organiser the labels are stored under")
        parser.add_argument("--labels", type=Path, required=True,
                            help="a label file: one JSON object per line (docs/agreement.md)")
        parser.add_argument("--draw", action="append", default=[], metavar="KIND:SIZE",
                            help="draw a sample of SIZE judgments of KIND first")
        parser.add_argument("--seed", type=int, help="the first draw's seed (then +1 each)")
        parser.add_argument("--settle-escalated", action="store_true",
                            help="then settle escalated judgments from the file")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = campaign_arg(options["slug"])
        user = user_arg(options["username"])
        try:
            labels = read_label_file(options["labels"])
        except (OSError, LabelFileError) as error:
            raise CommandError(f"{options['labels']}: {error}") from error
        for number, (kind, size) in enumerate(_draws(options["draw"])):
            seed = None if options["seed"] is None else options["seed"] + number
            try:
                sample = blind_sample_draw(campaign=campaign, kind=kind, size=size,
                                           seed=seed, user=user)
            except SampleRefused as refused:
                raise CommandError(f"--draw {kind}:{size}: {refused}") from refused
            self.stdout.write(f"Drew blind sample {sample.pk}: {sample.items.count()} {kind} "
                              f"judgments of {sample.population} (seed {sample.seed})")
        known = labels_by_judgment(campaign=campaign, labels=labels)
        waiting = BlindItem.objects.filter(sample__campaign=campaign, label__isnull=True,
                                           judgment_id__in=known).select_related("judgment")
        labelled = 0
        for item in waiting:
            try:
                blind_item_label(item=item, user=user,
                                 changes=fitted_label(item.judgment, known[item.judgment_id]))
            except EditRefused as refused:
                raise CommandError(f"blind item {item.pk}: {refused}") from refused
            labelled += 1
        self.stdout.write(f"Labelled {labelled} sampled judgment(s) from {options['labels']}")
        cascade = cascade_to_second_judge(campaign=campaign)
        if cascade.decided or cascade.withdrawn:
            self.stdout.write(f"The second judge decided {cascade.decided} escalated "
                              f"judgment(s); {cascade.withdrawn} earlier decision(s) withdrawn")
        if options["settle_escalated"]:
            self._settle(campaign, user, known)
        self.stdout.write("Agreement with people:")
        for line in report_lines(agreement_report(campaign=campaign)):
            self.stdout.write(line)

    def _settle(self, campaign: Any, user: Any, known: dict[int, dict[str, Any]]) -> None:
        escalated = (official_judgments(campaign=campaign)
                     .filter(escalation_filter(campaign=campaign), edited_label__isnull=True))
        settled = missing = 0
        for judgment in escalated:
            if judgment.pk not in known:
                missing += 1
                continue
            try:
                judgment_edit(judgment=judgment, user=user, note=SETTLED_NOTE, reason="",
                              changes=fitted_label(judgment, known[judgment.pk]))
            except EditRefused as refused:
                raise CommandError(f"judgment {judgment.pk}: {refused}") from refused
            settled += 1
        self.stdout.write(f"Settled {settled} escalated judgment(s) from the label file; "
                          f"{missing} not in it are left for the review queue")
