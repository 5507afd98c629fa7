"""Benchmark: scoring a whole leaderboard of 100 runs x 1,000 questions.

Builds seeded synthetic judgments: AC runs (per run and question, a correct/incorrect
judgment drawn with a run-specific accuracy, a confidence 0..100 and 0-10 nuggets marked
B/R/N, each citing a passage of some PR run) and PR runs (20-passage rankings), whose
graded qrels are derived from the R nuggets (docs/measures.md). It then
prints, measured side by side in this one run (each timing the best of --repeat, the
repeats interleaved so that a noisy machine slows every candidate alike):
- the anchor: pytrec_eval's nDCG@10,20 alone on the same qrels and 100 PR runs, from
  the runs' rankings as score_pr_track takes them (pytrec_eval's input, qid -> passage
  -> score, built from them, then its C evaluation of each run against one evaluator),
  and the C evaluation alone, with the runs already in pytrec_eval's shape;
- score_pr_track: every PR measure (nDCG@10,20, MSnDCG@10,20, Q-measure, nERR@10,20)
  for the 100 runs, and its ratio to the anchor (target: at most 1.5x);
- the whole leaderboard: deriving the qrels, AC scores
  (score_ac_track), PR scores (score_pr_track), the bootstrap intervals the snapshots
  show (PR nDCG@10 and @20, AC nugget precision) and the PR track's randomised Tukey
  HSD with B = 5000 and ANOVA (track_statistics, as the scoring services call it), and
  its ratio to the anchor (at most 4x); and, apart, what the AC track's own HSD adds;
- the HSD against a straightforward per-permutation Python loop (rng.permutation of
  each topic's row, run means, max - min), timed on fewer permutations and
  extrapolated linearly to B, with one thread and with the default workers;
- that the numbers are the per-run pure functions' (score_pr_run with pytrec_eval's
  nDCG, score_ac_run, scipy's bootstrap), to 1e-12, on the toy campaign in
  tests/data/toy, on trec_eval's test suite (--reference, by default the repository's
  copy in tests/data/trec_eval) and on runs of the synthetic track;
- the peak resident memory of the process.

Run: .venv/bin/python bench/bench_scoring.py [--runs 100] [--questions 1000]
     [--permutations 5000] [--loop-permutations 200] [--repeat 3] [--seed 0]
The measures are pure functions: no Django, no database.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import pytrec_eval
from scipy import stats as sp_stats

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scoring.measures import (  # noqa: E402
    AcRunScores,
    JudgedAnswer,
    MarkedNugget,
    PassageKey,
    PrRunScores,
    ac_parts,
    derive_pr_qrels,
    randomised_tukey_hsd,
    score_ac_run,
    score_ac_track,
    score_pr_run,
    score_pr_track,
)
from scoring.measures.catalogue import HSD_SEED  # noqa: E402
from scoring.measures.stats import BOOTSTRAP_RESAMPLES, bootstrap_cis  # noqa: E402
from scoring.measures.track_stats import (  # noqa: E402
    HsdInput,
    TrackStatistics,
    question_matrix,
    track_statistics,
)
from submissions.formats.ac_run import NuggetRecord  # noqa: E402
from submissions.formats.marked_ac_run import MARKS, parse_marked_ac_run  # noqa: E402
from submissions.formats.pr_run import parse_pr_run  # noqa: E402

FloatArray = npt.NDArray[np.float64]

DEPTH = 20  # passages per question in a PR run
MAX_NUGGETS = 10
ALPHA = 0.05
# Same tolerance as scoring.measures.hsd: a permuted range equal to an observed
# difference up to rounding counts as reaching it.
RELATIVE_TOLERANCE = 1e-9
# The targets, as ratios to pytrec_eval's nDCG@10,20 alone.
PR_TARGET = 1.5
LEADERBOARD_TARGET = 4.0
# "Identical": every value within this of the per-run pure functions'.
SAME = 1e-12
TOY = REPO / "tests" / "data" / "toy"
TREC_EVAL = REPO / "tests" / "data" / "trec_eval"
# tests/data/README.md: the toy run's D002 answer (Buzz Aldrin) is wrong, the others right.
TOY_INCORRECT = {"D002"}

T = TypeVar("T")


@dataclass(frozen=True)
class Judgments:
    """Synthetic judged runs of one campaign."""

    qids: list[str]
    ac_runs: dict[str, dict[str, JudgedAnswer]]
    marked: list[list[MarkedNugget]]
    pr_runs: dict[str, dict[str, tuple[str, ...]]]
    n_nuggets: int


def make_judgments(rng: np.random.Generator, *, runs: int, questions: int) -> Judgments:
    """Seeded synthetic judgments of `runs` AC runs and `runs` PR runs.

    Every passage (PR run j, question q, rank r) is latently relevant with probability
    quality_j * ease_q * 0.85^(r-1). An AC nugget cites a latently relevant passage of
    the question's pool (any PR run) 70% of the time, any passage otherwise; it is
    marked B with a run-specific rate, else R if the passage is relevant and the answer
    correct, else N. About 0.5% of answer blocks are missing.
    """
    qids = [f"Q{q:04d}" for q in range(1, questions + 1)]
    pr_names = [f"PR{j:03d}" for j in range(runs)]
    ac_names = [f"AC{a:03d}" for a in range(runs)]
    pool_size = runs * DEPTH

    quality = rng.uniform(0.15, 0.85, size=runs)
    ease = rng.uniform(0.3, 1.0, size=questions)
    decay = 0.85 ** np.arange(DEPTH)
    chance = ease[:, None, None] * quality[None, :, None] * decay[None, None, :]
    pool = (rng.random((questions, runs, DEPTH)) < chance).reshape(questions, pool_size)
    pool_counts = pool.sum(axis=1)
    # relevant passages of all questions, question after question, plus a sentinel
    pool_flat = np.append(np.flatnonzero(pool) % pool_size, 0)
    pool_starts = np.concatenate(([0], np.cumsum(pool_counts)[:-1]))

    accuracy = rng.uniform(0.25, 0.85, size=runs)
    p_correct = np.clip(accuracy[:, None] + 0.5 * (ease[None, :] - 0.65), 0.02, 0.98)
    answered = rng.random((runs, questions)) < 0.995
    correct = (rng.random((runs, questions)) < p_correct) & answered
    base = rng.uniform(0.3, 0.7, size=runs)
    gap = rng.uniform(0.0, 0.4, size=runs)
    noise = rng.normal(0.0, 0.15, size=(runs, questions))
    confidence = np.clip(np.rint(100 * (base[:, None] + gap[:, None] * correct + noise)), 0, 100)
    n_nuggets = np.where(answered, rng.integers(0, MAX_NUGGETS + 1, size=(runs, questions)), 0)

    # one entry per nugget line, in (AC run, question, line) order
    cell = np.repeat(np.arange(runs * questions), n_nuggets.ravel())
    nugget_run, nugget_question = np.divmod(cell, questions)
    total = cell.size
    counts = pool_counts[nugget_question]
    from_pool = (rng.random(total) < 0.7) & (counts > 0)
    in_pool = pool_starts[nugget_question] + (rng.random(total) * counts).astype(np.intp)
    pooled = pool_flat[np.minimum(in_pool, pool_flat.size - 1)]
    target = np.where(from_pool, pooled, rng.integers(0, pool_size, size=total))
    bogus_rate = rng.uniform(0.05, 0.2, size=runs)
    bogus = rng.random(total) < bogus_rate[nugget_run]
    relevant = ~bogus & pool[nugget_question, target] & correct[nugget_run, nugget_question]
    marks: list[str] = np.where(bogus, "B", np.where(relevant, "R", "N")).tolist()
    target_run: list[int] = (target // DEPTH).tolist()
    target_rank: list[int] = (target % DEPTH).tolist()

    keys = [[PassageKey(name, rank) for rank in range(1, DEPTH + 1)] for name in pr_names]
    answered_l: list[list[bool]] = answered.tolist()
    correct_l: list[list[bool]] = correct.tolist()
    confidence_l: list[list[int]] = confidence.astype(int).tolist()
    n_nuggets_l: list[list[int]] = n_nuggets.tolist()
    ac_runs: dict[str, dict[str, JudgedAnswer]] = {}
    marked: list[list[MarkedNugget]] = []
    line = 0
    for a, name in enumerate(ac_names):
        answers: dict[str, JudgedAnswer] = {}
        nuggets: list[MarkedNugget] = []
        for q, qid in enumerate(qids):
            if not answered_l[a][q]:
                continue
            end = line + n_nuggets_l[a][q]
            answers[qid] = JudgedAnswer(
                correct=correct_l[a][q], confidence=confidence_l[a][q], marks=tuple(marks[line:end])
            )
            nuggets.extend(
                MarkedNugget(
                    NuggetRecord(qid, i, keys[target_run[i]][target_rank[i]], ""), MARKS[marks[i]]
                )
                for i in range(line, end)
            )
            line = end
        ac_runs[name] = answers
        marked.append(nuggets)

    pr_runs: dict[str, dict[str, tuple[str, ...]]] = {}
    for j, name in enumerate(pr_names):
        ranking = tuple(str(key) for key in keys[j])
        pr_runs[name] = dict.fromkeys(qids, ranking)
    return Judgments(qids, ac_runs, marked, pr_runs, total)


def loop_tukey_hsd(
    scores: FloatArray, n_permutations: int, rng: np.random.Generator
) -> FloatArray:
    """Randomised Tukey HSD p-values, one Python iteration per permutation.

    For each trial, permute every topic's row across the runs (rng.permutation), take
    the run means and record max - min; p of a pair = fraction of trials whose range
    reaches the pair's observed absolute difference in means (no +1 correction).
    """
    means = scores.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    threshold = observed - RELATIVE_TOLERANCE * max(1.0, float(np.abs(scores).max()))
    reached = np.zeros(observed.shape, dtype=np.int64)
    for _ in range(n_permutations):
        permuted = np.array([rng.permutation(row) for row in scores])
        run_means = permuted.mean(axis=0)
        reached += (run_means.max() - run_means.min()) >= threshold
    p_values: FloatArray = reached / n_permutations
    np.fill_diagonal(p_values, 1.0)
    return p_values


def best_of(repeat: int, measure: Callable[[], T]) -> tuple[float, T]:
    """The shortest of `repeat` timings of `measure()`, and its last result."""
    best, result = math.inf, None
    for _ in range(repeat):
        started = time.perf_counter()
        result = measure()
        best = min(best, time.perf_counter() - started)
    return best, result  # type: ignore[return-value]


def pytrec_eval_input(runs: Mapping[str, Mapping[str, Sequence[str]]]
                      ) -> dict[str, dict[str, dict[str, float]]]:
    """The runs as a pytrec_eval user holds them: qid -> docid -> score, the scores
    decreasing with the rank so that trec_eval keeps the PassageRank order."""
    return {name: {qid: {docid: float(len(ranking) - i) for i, docid in enumerate(ranking)}
                   for qid, ranking in rankings.items()}
            for name, rankings in runs.items()}


def pytrec_eval_ndcg(qrels: dict[str, dict[str, int]],
                     runs: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict]:
    """pytrec_eval's nDCG@10,20 alone, every run against one evaluator."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,20"})
    return {name: evaluator.evaluate(run) for name, run in runs.items()}


def pytrec_eval_from_rankings(qrels: dict[str, dict[str, int]],
                              runs: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, dict]:
    """The anchor: what it takes to have pytrec_eval's nDCG@10,20 of these runs."""
    return pytrec_eval_ndcg(qrels, pytrec_eval_input(runs))


@dataclass
class Leaderboard:
    """What the leaderboard of the table computes, and how long each part took."""

    times: dict[str, float]
    ac: dict[str, AcRunScores]
    pr: dict[str, PrRunScores]
    pr_statistics: TrackStatistics


def leaderboard(data: Judgments, permutations: int) -> Leaderboard:
    """The whole leaderboard: qrels, AC, PR, intervals, the PR track's HSD."""
    times: dict[str, float] = {}
    started = time.perf_counter()

    def lap(label: str) -> None:
        nonlocal started
        now = time.perf_counter()
        times[label] = times.get(label, 0.0) + now - started
        started = now

    qrels = derive_pr_qrels(data.marked)
    lap("derive qrels")
    ac = score_ac_track(qids=data.qids, runs=data.ac_runs)
    lap("AC scores (score_ac_track)")
    pr = score_pr_track(qrels=qrels, runs=data.pr_runs)
    lap("PR scores (score_pr_track)")
    # the question x run matrices, as the scoring services build them
    ac_names, pr_names = list(ac), list(pr)
    precision = question_matrix([ac[name].per_question()["nugget_precision"]
                                 for name in ac_names], data.qids)
    bootstrap_cis(precision, seed=HSD_SEED)
    lap("AC intervals (nugget precision)")
    topics = sorted(qrels)
    matrices = {key: question_matrix([pr[name].by_measure()[key].per_question
                                      for name in pr_names], topics)
                for key in ("ndcg@10", "ndcg@20")}
    pr_statistics = track_statistics(matrices, main="ndcg@10", run_names=pr_names,
                                     n_permutations=permutations, seed=HSD_SEED)
    lap(f"PR statistics: intervals, HSD B={permutations}, ANOVA")
    return Leaderboard(times, ac, pr, pr_statistics)


def ac_track_statistics(ac: Mapping[str, AcRunScores], permutations: int) -> TrackStatistics:
    """The AC snapshot's own statistics beyond its intervals: the ANOVA of nugget
    precision and the HSD of HMR, the ranking measure, on its per-question parts."""
    names = list(ac)
    qids = next(iter(ac.values())).columns.qids
    matrices = {key: question_matrix([ac[name].per_question()[key] for name in names], qids)
                for key in ("nugget_precision", "correct", "confidence")}
    hmr = HsdInput(ac_parts.HMR.matrices(matrices), ac_parts.HMR.statistic(len(qids)))
    return track_statistics({"nugget_precision": matrices["nugget_precision"]},
                            main="nugget_precision", run_names=names,
                            n_permutations=permutations, seed=HSD_SEED, tests={"hmr": hmr})


# --- identical numbers ------------------------------------------------------------------


def largest_pr_difference(track: Mapping[str, PrRunScores],
                          per_run: Mapping[str, PrRunScores]) -> float:
    """max |track - per run| over every measure, question and mean."""
    worst = 0.0
    for name, reference in per_run.items():
        ours = track[name].by_measure()
        for key, scores in reference.by_measure().items():
            if set(ours[key].per_question) != set(scores.per_question):
                return math.inf
            worst = max(worst, abs(ours[key].mean - scores.mean),
                        *(abs(ours[key].per_question[q] - v)
                          for q, v in scores.per_question.items()))
    return worst


def largest_ac_difference(track: Mapping[str, AcRunScores],
                          per_run: Mapping[str, AcRunScores]) -> float:
    worst = 0.0
    for name, reference in per_run.items():
        ours = track[name]
        if ours.columns.qids != reference.columns.qids:
            return math.inf
        pairs = list(zip(ours.leaderboard_row().values(),
                         reference.leaderboard_row().values(), strict=True))
        for key, values in reference.per_question().items():
            pairs += [(ours.per_question()[key][q], v) for q, v in values.items()]
        worst = max(worst, *(abs(a - b) for a, b in pairs))
    return worst


def toy_inputs() -> tuple[dict[str, dict[str, list[str]]], list[str],
                          dict[str, JudgedAnswer], list[MarkedNugget]]:
    """The toy campaign (tests/data/toy): its PR runs, questions, judged AC run."""
    pr_runs: dict[str, dict[str, list[str]]] = {}
    for name in ("WASEDA-PO-1", "KYOTO-PG-1"):
        with (TOY / name).open("rb") as file:
            for record in parse_pr_run(file).records:
                pr_runs.setdefault(name, {}).setdefault(record.qid, []).append(
                    str(PassageKey(name, record.rank)))
    qids = [line.split(";", 1)[0]
            for line in (TOY / "questions.txt").read_text(encoding="utf-8").splitlines()]
    with (TOY / "WASEDA-AC-1.marked").open("rb") as file:
        blocks = parse_marked_ac_run(file).records
    answers = {block.qid: JudgedAnswer(block.qid not in TOY_INCORRECT, block.confidence,
                                       tuple(m.mark for m in block.nuggets))
               for block in blocks}
    return pr_runs, qids, answers, [m for block in blocks for m in block.nuggets]


def trec_eval_inputs(directory: Path) -> tuple[dict[str, dict[str, int]],
                                               dict[str, list[str]], dict[str, float]]:
    """trec_eval's test suite: qrels, the run in trec_eval's order, and the ndcg_cut
    values trec_eval printed for it (out.test.aq* under `directory`)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (directory / "qrels.test").read_text().splitlines():
        qid, _iteration, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    scores: dict[str, dict[str, float]] = {}
    for line in (directory / "results.test").read_text().splitlines():
        qid, _q0, docid, _rank, score, _tag = line.split()
        scores.setdefault(qid, {})[docid] = float(score)
    # trec_eval orders by score, descending, ties by docno, descending
    rankings = {qid: sorted(run, key=lambda d, run=run: (run[d], d), reverse=True)  # type: ignore[misc]
                for qid, run in scores.items()}
    printed: dict[str, float] = {}
    output = next(p for p in (directory / "out.test.aq.ndcg_cut", directory / "out.test.aq")
                  if p.exists())
    for line in output.read_text().splitlines():
        measure, qid, value = line.split()
        if measure in ("ndcg_cut_10", "ndcg_cut_20") and qid != "all":
            printed[f"{measure}:{qid}"] = float(value)
    return qrels, rankings, printed


def check_identical(data: Judgments, board: Leaderboard, reference: Path,
                    sample: int) -> bool:
    """Print how far the track-level numbers are from the per-run pure functions'."""
    print(f"identical to the per-run pure functions (to {SAME:g})?")
    results: list[tuple[str, float]] = []

    pr_runs, qids, answers, marked = toy_inputs()
    qrels = derive_pr_qrels([marked])
    results.append(("toy campaign, PR (score_pr_run, nDCG by pytrec_eval)", largest_pr_difference(
        score_pr_track(qrels=qrels, runs=pr_runs),
        {name: score_pr_run(qrels=qrels, rankings=r) for name, r in pr_runs.items()})))
    results.append(("toy campaign, AC (score_ac_run)", largest_ac_difference(
        score_ac_track(qids=qids, runs={"WASEDA-AC-1": answers}),
        {"WASEDA-AC-1": score_ac_run(qids=qids, answers=answers)})))

    qrels, rankings, printed = trec_eval_inputs(reference)
    track = score_pr_track(qrels=qrels, runs={"results.test": rankings})["results.test"]
    results.append(("trec_eval's test suite, PR (score_pr_run)", largest_pr_difference(
        {"results.test": track}, {"results.test": score_pr_run(qrels=qrels, rankings=rankings)})))
    # trec_eval prints 4 decimals: agreeing with it means rounding to its digits
    rounded = max(abs(round(track.ndcg[int(key.split("_")[2].split(":")[0])]
                            .per_question[key.split(":")[1]], 4) - value)
                  for key, value in printed.items())
    results.append((f"  nDCG@10,20 rounded as trec_eval printed them ({len(printed)} values)",
                    rounded))

    names = list(data.pr_runs)[:sample]
    qrels = derive_pr_qrels(data.marked)
    results.append((f"synthetic track, {len(names)} PR runs (score_pr_run)", largest_pr_difference(
        board.pr, {name: score_pr_run(qrels=qrels, rankings=data.pr_runs[name])
                   for name in names})))
    results.append((f"synthetic track, {len(data.ac_runs)} AC runs (score_ac_run)",
                    largest_ac_difference(board.ac, {
                        name: score_ac_run(qids=data.qids, answers=answers)
                        for name, answers in data.ac_runs.items()})))
    results.append(("synthetic track, PR intervals (scipy.stats.bootstrap)",
                    largest_interval_difference(board)))
    for label, difference in results:
        print(f"  {label:<66} max |difference| {difference:.1e}")
    return all(difference <= SAME for _label, difference in results)


def largest_interval_difference(board: Leaderboard) -> float:
    """The snapshot's intervals against scipy.stats.bootstrap's, which computed them
    before they were vectorised (same resamples, bounds clipped to the scores)."""
    names = list(board.pr)
    worst = 0.0
    for key in ("ndcg@10", "ndcg@20"):
        matrix = np.array([list(board.pr[name].by_measure()[key].per_question.values())
                           for name in names]).T
        interval = sp_stats.bootstrap(
            (matrix,), np.mean, axis=0, vectorized=True, method="percentile",
            n_resamples=BOOTSTRAP_RESAMPLES, batch=64,
            random_state=np.random.default_rng(HSD_SEED)).confidence_interval
        low, high = matrix.min(axis=0), matrix.max(axis=0)
        ours = board.pr_statistics.intervals[key]
        worst = max(worst,
                    float(np.abs(np.clip(interval.low, low, high)
                                 - [ci.lower for ci in ours]).max()),
                    float(np.abs(np.clip(interval.high, low, high)
                                 - [ci.upper for ci in ours]).max()))
    return worst


# --- the report ---------------------------------------------------------------------------


def ratio_line(label: str, seconds: float, anchor: float, evaluation: float,
               target: float | None = None) -> str:
    """A timing, its ratio to the anchor and to the C evaluation alone, and whether the
    ratio to the anchor meets its target."""
    verdict = "" if target is None else (
        f"  target <= {target:g}x: {'met' if seconds / anchor <= target else 'MISSED'}")
    return (f"  {label:<56} {seconds:6.2f} s {seconds / anchor:6.2f}x "
            f"{seconds / evaluation:6.2f}x{verdict}")


def hsd_against_loop(matrix: FloatArray, names: list[str], B: int, L: int, seed: int,
                     repeat: int) -> None:
    print(f"Tukey HSD on the {matrix.shape[0]}x{matrix.shape[1]} nDCG@10 matrix against a "
          f"straightforward per-permutation loop:")
    loop_time, loop_p = best_of(1, lambda: loop_tukey_hsd(
        matrix, L, np.random.default_rng(seed + 1)))
    one_thread, _ = best_of(repeat, lambda: randomised_tukey_hsd(
        matrix, run_names=names, n_permutations=B, seed=seed, workers=1))
    default, hsd = best_of(repeat, lambda: randomised_tukey_hsd(
        matrix, run_names=names, n_permutations=B, seed=seed))
    loop_per = loop_time / L
    print(f"  loop, B={L}: {loop_time:.2f} s, {loop_per * 1e3:.2f} ms a permutation; "
          f"extrapolated to B={B}: {loop_per * B:.1f} s")
    for label, seconds in (("one thread", one_thread), ("default workers", default)):
        print(f"  vectorised, B={B}, {label}: {seconds:.2f} s, "
              f"{seconds / B * 1e3:.3f} ms a permutation: {loop_per * B / seconds:.0f}x "
              f"faster than the loop")
    print(f"agreement with the loop at the same B={L} (different random streams):")
    small = randomised_tukey_hsd(matrix, run_names=names, n_permutations=L, seed=seed)
    upper = np.triu_indices(len(names), k=1)
    p_loop, p_vec = loop_p[upper], small.p_values[upper]
    difference = np.abs(p_loop - p_vec)
    pooled = (p_loop + p_vec) / 2
    se = np.sqrt(pooled * (1 - pooled) * 2 / L)
    z = np.divide(difference, se, out=np.zeros_like(difference), where=se > 0)
    band = 3 * math.sqrt(ALPHA * (1 - ALPHA) / L)
    far = (np.abs(p_loop - ALPHA) > band) & (np.abs(p_vec - ALPHA) > band)
    disagree = int(((p_loop < ALPHA) != (p_vec < ALPHA))[far].sum())
    print(f"  max |p_loop - p_vectorised| over {difference.size} pairs: "
          f"{difference.max():.4f} (mean {difference.mean():.4f}); max |difference| / its "
          f"Monte-Carlo standard error: {z.max():.2f}")
    print(f"  decisions at alpha={ALPHA} for the {int(far.sum())} pairs with both p outside "
          f"{ALPHA} +- {band:.3f}: {disagree} disagree")
    significant = int((hsd.p_values[upper] < ALPHA).sum())
    print(f"  B={B}: {significant} of {upper[0].size} pairs significant at alpha={ALPHA}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=5000)
    parser.add_argument("--loop-permutations", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check-runs", type=int, default=10,
                        help="synthetic PR runs checked against score_pr_run")
    parser.add_argument("--reference", type=Path, default=TREC_EVAL,
                        help="trec_eval's test suite (qrels.test, results.test, out.test.aq)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    B, L, repeat = args.permutations, args.loop_permutations, args.repeat

    started = time.perf_counter()
    data = make_judgments(np.random.default_rng(args.seed), runs=args.runs,
                          questions=args.questions)
    qrels = derive_pr_qrels(data.marked)
    as_scores = pytrec_eval_input(data.pr_runs)
    judged = sum(map(len, qrels.values())) / max(1, len(qrels))
    print(f"synthetic judgments: {args.runs} AC + {args.runs} PR runs x {args.questions} "
          f"questions, {data.n_nuggets} nugget lines, {DEPTH} passages a ranking, "
          f"{judged:.0f} judged passages a question (built in "
          f"{time.perf_counter() - started:.2f} s)")

    # Interleaved: each repeat times the anchors, the PR scores and the whole leaderboard.
    anchor = evaluation = pr_time = board_time = math.inf
    board: Leaderboard | None = None
    for _ in range(repeat):
        anchor = min(anchor, best_of(1, lambda: pytrec_eval_from_rankings(
            qrels, data.pr_runs))[0])
        evaluation = min(evaluation, best_of(1, lambda: pytrec_eval_ndcg(qrels, as_scores))[0])
        pr_time = min(pr_time, best_of(1, lambda: score_pr_track(
            qrels=qrels, runs=data.pr_runs))[0])
        seconds, candidate = best_of(1, lambda: leaderboard(data, B))
        if seconds < board_time:
            board_time, board = seconds, candidate
    assert board is not None
    ac_extra, _ = best_of(1, lambda: ac_track_statistics(board.ac, B))

    print(f"best of {repeat}, side by side (ratios to the anchor, and to pytrec_eval's C "
          f"evaluation alone):")
    print(ratio_line("pytrec_eval nDCG@10,20 from the rankings (the anchor)", anchor, anchor,
                     evaluation))
    print(ratio_line("  of which its C evaluation alone", evaluation, anchor, evaluation))
    print(ratio_line("score_pr_track, all PR measures", pr_time, anchor, evaluation,
                     PR_TARGET))
    print(ratio_line(f"whole leaderboard, Tukey HSD B={B} included", board_time, anchor,
                     evaluation, LEADERBOARD_TARGET))
    for label, seconds in board.times.items():
        print(f"    {label:<56} {seconds:7.2f} s")
    print(ratio_line("(apart) the AC track's own HSD and ANOVA", ac_extra, anchor, evaluation))

    names = list(board.pr)
    matrix = np.array([list(board.pr[name].ndcg[10].per_question.values())
                       for name in names]).T
    hsd_against_loop(matrix, names, B, L, args.seed, repeat)
    best = max(names, key=lambda name: board.pr[name].ndcg[10].mean)
    print(f"  best PR run {best}: nDCG@10 {board.pr[best].ndcg[10].mean:.4f}, "
          f"Q {board.pr[best].q_measure.mean:.4f}, nERR@10 {board.pr[best].nerr[10].mean:.4f}")

    same = check_identical(data, board, args.reference, args.check_runs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak resident memory of this process: {peak:.0f} MiB")
    if not same:
        sys.exit("the track-level numbers differ from the per-run functions'")


if __name__ == "__main__":
    main()
