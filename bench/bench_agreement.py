"""Benchmark: what the agreement guarantee costs people, for a simulated organiser.

Each packaged model grades each labelled set (the dev set, and `--heldout FILE`) with
the shipped pipeline; the outcomes are kept under var/bench/agreement/ and re-used by
the next run. Then per set, model and kind (entailment; the answer check with gold
answers; the answer check from nuggets), a simulated organiser, `--draws` times:
labels a seeded blind sample of `--sample` judgments with the set's truth, lets the
guarantee pick the threshold (grading.agreement.guarantee), accepts the judgments at or
above it, and gives each one under it the truth (a person reviewing it). Printed:

- published: agreement of every label with the truth (sampled, reviewed, accepted);
- accepted: agreement of the accepted ones, and the share of draws where it reached the
  target (the guarantee promises at least 1 - risk of them, less a finite set's slack);
- touched: the share of judgments a person labelled or reviewed, the cost; and of the
  judgments not sampled, the share escalated to people (what a campaign much larger
  than its sample would pay beyond the sample).

The cascade 0.5B -> 1.5B does the same with two judges: the 0.5B's threshold from the
sample, the 1.5B's from the sampled items the 0.5B escalates, each at risk / 2 (a union
bound over the two, as Jung et al. 2025 do); the 1.5B sees only what the 0.5B escalates.

Each line is computed twice: on the judge's raw probabilities, and on its calibrated
confidences (on the dev set out of fold, a calibration fitted on the other folds; on a
held-out set, the packaged calibration, fitted on the dev set). Only their order
matters to the guarantee.

Run: .venv/bin/python bench/bench_agreement.py [--heldout FILE] [--sample 60]
     [--share 0.5] [--draws 200] [--target 0.9] [--risk 0.1]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from embedded_judge.models import DEFAULT_MODEL, SMALL_MODEL  # noqa: E402
from embedded_judge.options import ServerOptions  # noqa: E402
from embedded_judge.server import EmbeddedJudge  # noqa: E402
from grading.agreement.guarantee import choose_threshold  # noqa: E402
from grading.llm.calls import JudgeConfig  # noqa: E402
from grading.openai_judge import OpenAIJudge  # noqa: E402
from grading.validation.calibration import packaged_calibration  # noqa: E402
from grading.validation.labelled import DEV_SET, LabelledSet, read_labelled_set  # noqa: E402
from grading.validation.runner import validate_judge  # noqa: E402

VAR = ROOT / "var"
STORE = VAR / "bench" / "agreement"
LOG = VAR / "logs" / "bench-agreement.log"
PASSES = ("entailment", "answer_gold", "answer_nuggets")


@dataclass(frozen=True)
class Judged:
    """One judgment of a labelled item: how sure the judge was, and whether it was right."""

    item: str
    confidence: float
    right: bool


def graded(model: str, labelled: LabelledSet, *, dev: bool,
           raw: bool) -> dict[str, list[Judged]]:
    """The model's judgments of the set per pass (with its raw or its calibrated
    confidence), from the store or graded now."""
    path = STORE / labelled.sha256[:16] / f"{model}.json"
    if not path.exists():
        with EmbeddedJudge(model, var_dir=VAR, options=ServerOptions(), progress=None,
                           startup_timeout=900, log_path=LOG) as server:
            judge = OpenAIJudge(JudgeConfig(base_url=server.base_url, model=model,
                                            concurrency=ServerOptions().n_parallel,
                                            timeout=600))
            if not dev:
                judge.calibration = packaged_calibration(model)
            result = validate_judge(judge, labelled)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result.outcomes), encoding="utf-8")
    sure = "confidence" if raw else "refit_confidence" if dev else "calibrated_confidence"
    judged: dict[str, list[Judged]] = {name: [] for name in PASSES}
    for record in json.loads(path.read_text(encoding="utf-8")):
        confidence = record.get(sure)
        if confidence is None:
            confidence = record.get("confidence") or 0.0
        judged[record["pass"]].append(Judged(record["id"], confidence, record["agreed"]))
    return judged


@dataclass
class Tally:
    published: list[float]
    accepted: list[float]
    reached: list[bool]
    touched: list[float]
    escalated: list[float]  # of the judgments not sampled, the share sent to people
    thresholds: list[float | None]

    def line(self, name: str, target: float) -> str:
        def mean(values: Sequence[float]) -> str:
            return f"{statistics.fmean(values):.3f}" if values else "  -  "
        found = [t for t in self.thresholds if t is not None]
        at = f"{statistics.median(found):.3f}" if found else "none"
        return (f"  {name:<34} published {mean(self.published)}  accepted "
                f"{mean(self.accepted)} (>= {target:g} in {mean(self.reached)} of draws "
                f"with any)  touched {mean(self.touched)} (escalated "
                f"{mean(self.escalated)} of the rest)  threshold (median) {at}, "
                f"found in {len(found)}/{len(self.thresholds)}")


def simulate(judges: Sequence[list[Judged]], *, sample: int, draws: int, target: float,
             risk: float) -> Tally:
    """A cascade of judges (one judge: no cascade) over `draws` blind samples."""
    tally = Tally([], [], [], [], [], [])
    population = len(judges[0])
    for seed in range(draws):
        picked = set(random.Random(seed).sample(range(population), min(sample, population)))
        open_sampled, open_rest = sorted(picked), [i for i in range(population)
                                                    if i not in picked]
        accepted: list[bool] = []
        first_threshold = None
        for number, judge in enumerate(judges):
            verdicts = [(judge[i].confidence, judge[i].right) for i in open_sampled]
            threshold = choose_threshold(verdicts, target=target, risk=risk / len(judges))
            if number == 0:
                first_threshold = threshold.value
            if threshold.value is None:
                continue
            accepted += [judge[i].right for i in open_rest
                         if judge[i].confidence >= threshold.value]
            open_rest = [i for i in open_rest if judge[i].confidence < threshold.value]
            open_sampled = [i for i in open_sampled if judge[i].confidence < threshold.value]
        people = len(picked) + len(open_rest)
        tally.published.append((people + sum(accepted)) / population)
        if accepted:
            tally.accepted.append(sum(accepted) / len(accepted))
            tally.reached.append(sum(accepted) / len(accepted) >= target)
        tally.touched.append(people / population)
        rest = population - len(picked)
        if rest:
            tally.escalated.append(len(open_rest) / rest)
        tally.thresholds.append(first_threshold)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", type=Path, action="append", default=[])
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--share", type=float, default=0.5,
                        help="at most this share of a set is sampled (the rest is the test)")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--risk", type=float, default=0.1)
    args = parser.parse_args()
    sets = [(read_labelled_set(DEV_SET), True)] + [
        (read_labelled_set(path), False) for path in args.heldout]
    print(f"Agreement guarantee: target {args.target:g}, risk {args.risk:g}, blind sample "
          f"{args.sample} (at most {args.share:g} of a set), {args.draws} draws per line")
    for (labelled, dev), raw in product(sets, (False, True)):
        judged = {model: graded(model, labelled, dev=dev, raw=raw)
                  for model in (SMALL_MODEL, DEFAULT_MODEL)}
        print(f"{labelled.name} ({'dev set' if dev else 'held out'}), "
              f"{'raw' if raw else 'calibrated'} confidences")
        for name in PASSES:
            small, default = judged[SMALL_MODEL][name], judged[DEFAULT_MODEL][name]
            if not default:
                continue
            assert [j.item for j in small] == [j.item for j in default]
            print(f" {name}: {len(default)} judgments, blind sample "
                  f"{min(args.sample, int(args.share * len(default)))}; judge right: 0.5B "
                  f"{statistics.fmean(j.right for j in small):.3f}, 1.5B "
                  f"{statistics.fmean(j.right for j in default):.3f}")
            sample = min(args.sample, int(args.share * len(default)))
            options = {"sample": sample, "draws": args.draws, "target": args.target,
                       "risk": args.risk}
            for label, cascade in ((f"{DEFAULT_MODEL} alone", [default]),
                                   (f"{SMALL_MODEL} alone", [small]),
                                   ("cascade 0.5B -> 1.5B", [small, default])):
                print(simulate(cascade, **options).line(label, args.target))


if __name__ == "__main__":
    main()
