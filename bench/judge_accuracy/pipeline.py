"""The shipped judge pipeline on the dev set and a held-out set, and the packaged models'
calibrations: what `judge_eval` measures, for each packaged model, in one run.

On the dev set the calibrated confidences are out of fold (refitted on the other folds);
on the held-out set they are those of the calibration fitted on the whole dev set, as
grading would store them: its ECE says whether the calibration holds beyond the data it
was fitted on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from embedded_judge.options import ServerOptions
from embedded_judge.server import EmbeddedJudge
from grading.llm.calls import JudgeConfig
from grading.openai_judge import OpenAIJudge
from grading.validation.calibration import PACKAGED_CALIBRATIONS, JudgeCalibration
from grading.validation.labelled import LabelledSet
from grading.validation.runner import validate_judge
from judge_accuracy.probes import LOG, VAR

SECTIONS = ("entailment", "answer_gold", "answer_nuggets")


def _line(set_name: str, section: str, f: dict[str, Any], ece_key: str) -> str:
    def n(value: Any, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"
    exact = f" exact-set {n(f.get('exact_relevant_set'))}" if "exact_relevant_set" in f else ""
    return (f"  {set_name:<16} {section:<15} n={f['items']:<4} acc {n(f['accuracy'])} "
            f"kappa {n(f['kappa'])}{exact}  ECE raw {n(f['ece_raw'])} "
            f"calibrated {n(f[ece_key])}  {n(f['judgments_per_second'], 2)} j/s")


def pipeline(models: Sequence[str], sets: Sequence[LabelledSet], *, write: bool,
             say: Callable[[str], None]) -> str:
    """Each model's figures, and (with `write`) its calibration kept for grading."""
    dev, rest = sets[0], sets[1:]
    lines = ["The shipped pipeline (rules, subtasks, thresholds) per packaged model; "
             "ECE calibrated: out of fold on the dev set, the dev set's fit elsewhere"]
    fitted: dict[str, Any] = {}
    for model in models:
        with EmbeddedJudge(model, var_dir=VAR, options=ServerOptions(), progress=None,
                           startup_timeout=900, log_path=LOG) as server:
            judge = OpenAIJudge(JudgeConfig(base_url=server.base_url, model=model,
                                            concurrency=ServerOptions().n_parallel, timeout=600))
            result = validate_judge(judge, dev)
            say(f"  {model}: dev set done")
            lines.append(f"{model}")
            lines += [_line(dev.name, s, result.figures[s], "ece_refit")
                      for s in SECTIONS if s in result.figures]
            if result.calibration is None:
                continue
            calibration = JudgeCalibration(
                steps=result.calibration.steps,
                source=f"packaged: fitted on {result.calibration.source}")
            fitted[model] = calibration.as_json()
            judge.calibration = calibration
            for labelled in rest:
                held = validate_judge(judge, labelled)
                say(f"  {model}: {labelled.name} done")
                lines += [_line(labelled.name, s, held.figures[s], "ece_calibrated")
                          for s in SECTIONS if s in held.figures]
    if write and fitted:
        PACKAGED_CALIBRATIONS.write_text(json.dumps(fitted, indent=1, sort_keys=True) + "\n",
                                         encoding="utf-8")
        lines.append(f"Calibrations written to {PACKAGED_CALIBRATIONS}")
    return "\n".join(lines)
