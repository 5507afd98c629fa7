"""`bench_judge.py --accuracy`: the variant table, per subtask, by accuracy first.

    .venv/bin/python bench/bench_judge.py --accuracy [--models M1,M2] [--variants V1,V2]
        [--heldout FILE] [--folds 5] [--report-only]
    .venv/bin/python bench/bench_judge.py --accuracy --pipeline [--heldout FILE]
        [--write-calibrations]

Asks each packaged model every variant's questions about the dev set (and a held-out
set where one is named), keeping the replies (probes.py), then prints per subtask and
variant: accuracy, balanced accuracy, ECE of the raw and the calibrated confidence and
judgments/s on the dev set cross-validated (threshold and calibration fitted on the other
folds), the same on the held-out set (fitted on the whole dev set), and accuracy per
category. With `--pipeline` it runs the shipped pipeline instead (pipeline.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grading.validation.labelled import DEV_SET, read_labelled_set
from judge_accuracy.pipeline import pipeline
from judge_accuracy.probes import collect
from judge_accuracy.report import report
from judge_accuracy.variants import VARIANTS

MODELS = "qwen2.5-coder-1.5b,qwen2.5-coder-0.5b"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--heldout", type=Path, default=None)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--pipeline", action="store_true",
                        help="measure the shipped pipeline instead of the variants")
    parser.add_argument("--write-calibrations", action="store_true",
                        help="with --pipeline: keep each model's dev-set calibration "
                             "for grading (grading/validation/calibrations.json)")
    args = parser.parse_args(argv)
    sets = [read_labelled_set(DEV_SET)]
    if args.heldout is not None:
        sets.append(read_labelled_set(args.heldout))
    models = args.models.split(",")
    variants = [VARIANTS[name] for name in args.variants.split(",")]

    def say(line: str) -> None:
        print(line, flush=True)

    if args.pipeline:
        print(pipeline(models, sets, write=args.write_calibrations, say=say))
        return
    if not args.report_only:
        for model in models:
            collect(model, variants, sets, say)
    print(report(models, variants, sets, folds=args.folds))


if __name__ == "__main__":
    main(sys.argv[1:])
