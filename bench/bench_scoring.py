"""Benchmark: scoring a whole leaderboard of 100 runs x 1,000 questions (issue 5).

Builds seeded synthetic judgments: AC runs (per run and question, a correct/incorrect
judgment drawn with a run-specific accuracy, a confidence 0..100 and 0-10 nuggets marked
B/R/N, each citing a passage of some PR run) and PR runs (20-passage rankings), whose
graded qrels are derived from the R nuggets (DESIGN.md sections 4 and 6). It then
prints, measured side by side in this one run:
- the time of each part of the leaderboard and the total: deriving the qrels, AC scores
  (score_ac_run) and PR scores (score_pr_run: nDCG@10/@20 via pytrec_eval, Q-measure,
  nERR@10) for every run, mean with 95% CI per run and measure, and randomised Tukey
  HSD with B = 5000 over the topic-by-run matrix of nDCG@10;
- the same HSD done by a straightforward per-permutation Python loop (rng.permutation
  of each topic's row, run means, max - min), timed on fewer permutations and
  extrapolated linearly to B, and its per-permutation cost against the vectorised one;
- how far the two implementations' p-values are apart when run with the same B (they
  draw from different random streams, so they agree only within Monte-Carlo error).

Run: .venv/bin/python bench/bench_scoring.py [--runs 100] [--questions 1000]
     [--permutations 5000] [--loop-permutations 200] [--seed 0]
The measures are pure functions: no Django, no database.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scoring.measures import (  # noqa: E402
    AcRunScores,
    JudgedAnswer,
    MarkedNugget,
    PassageKey,
    PrRunScores,
    derive_pr_qrels,
    randomised_tukey_hsd,
    score_ac_run,
    score_pr_run,
)
from scoring.measures.stats import MeanCI, mean_ci  # noqa: E402
from submissions.formats.ac_run import NuggetRecord  # noqa: E402
from submissions.formats.marked_ac_run import MARKS  # noqa: E402

FloatArray = npt.NDArray[np.float64]

DEPTH = 20  # passages per question in a PR run
MAX_NUGGETS = 10
ALPHA = 0.05
# Same tolerance as scoring.measures.hsd: a permuted range equal to an observed
# difference up to rounding counts as reaching it.
RELATIVE_TOLERANCE = 1e-9


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


def timed(label: str, started: float, times: list[float]) -> float:
    elapsed = time.perf_counter() - started
    times.append(elapsed)
    print(f"  {label:<48} {elapsed:8.2f} s")
    return time.perf_counter()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=5000)
    parser.add_argument("--loop-permutations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    B, L = args.permutations, args.loop_permutations

    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    data = make_judgments(rng, runs=args.runs, questions=args.questions)
    print(f"synthetic judgments: {args.runs} AC + {args.runs} PR runs x {args.questions} "
          f"questions, {data.n_nuggets} nugget lines, {DEPTH} passages a ranking "
          f"(built in {time.perf_counter() - started:.2f} s)")

    print("leaderboard:")
    times: list[float] = []
    started = time.perf_counter()
    qrels = derive_pr_qrels(data.marked)
    started = timed(f"derive qrels ({sum(map(len, qrels.values()))} graded passages)",
                    started, times)
    ac_scores: dict[str, AcRunScores] = {
        name: score_ac_run(qids=data.qids, answers=answers)
        for name, answers in data.ac_runs.items()
    }
    started = timed(f"AC scores, {len(ac_scores)} runs (score_ac_run)", started, times)
    pr_scores: dict[str, PrRunScores] = {
        name: score_pr_run(qrels=qrels, rankings=rankings)
        for name, rankings in data.pr_runs.items()
    }
    started = timed(f"PR scores, {len(pr_scores)} runs (score_pr_run)", started, times)

    pr_names = list(pr_scores)
    topics = sorted(pr_scores[pr_names[0]].ndcg[10].per_question)
    cis: dict[tuple[str, str], MeanCI] = {}
    for name, ac in ac_scores.items():
        cis[name, "accuracy"] = mean_ci([float(q.correct) for q in ac.questions])
        cis[name, "nugget_precision"] = mean_ci([q.nugget_precision for q in ac.questions])
    for name, pr in pr_scores.items():
        for measure, values in (("ndcg@10", pr.ndcg[10]), ("ndcg@20", pr.ndcg[20]),
                                ("q_measure", pr.q_measure), ("nerr@10", pr.nerr[10])):
            cis[name, measure] = mean_ci([values.per_question[t] for t in topics])
    started = timed(f"mean with 95% CI ({len(cis)} run x measure)", started, times)

    matrix = np.array(
        [[pr_scores[name].ndcg[10].per_question[t] for name in pr_names] for t in topics]
    )
    hsd = randomised_tukey_hsd(matrix, run_names=pr_names, n_permutations=B, seed=args.seed)
    timed(f"Tukey HSD, B={B}, {matrix.shape[0]}x{matrix.shape[1]} nDCG@10", started, times)
    vectorised_time = times[-1]
    print(f"  {'total':<48} {sum(times):8.2f} s")

    upper = np.triu_indices(len(pr_names), k=1)
    significant = int((hsd.p_values[upper] < ALPHA).sum())
    best = max(pr_names, key=lambda name: cis[name, "ndcg@10"].mean)
    worst = min(pr_names, key=lambda name: cis[name, "ndcg@10"].mean)
    for label, name in (("best", best), ("worst", worst)):
        ci = cis[name, "ndcg@10"]
        print(f"  {label} PR run {name}: nDCG@10 {ci.mean:.4f} "
              f"[{ci.lower:.4f}, {ci.upper:.4f}], Q {pr_scores[name].q_measure.mean:.4f}, "
              f"nERR@10 {pr_scores[name].nerr[10].mean:.4f}")
    best_ac = max(ac_scores, key=lambda name: ac_scores[name].accuracy)
    print(f"  best AC run {best_ac}: accuracy {ac_scores[best_ac].accuracy:.3f}, "
          f"HMR {ac_scores[best_ac].hmr:.3f}, ECE {ac_scores[best_ac].ece:.3f}")
    print(f"  HSD: {significant} of {upper[0].size} pairs significant at alpha={ALPHA}")

    print(f"straightforward per-permutation loop on the same {matrix.shape[0]}x"
          f"{matrix.shape[1]} matrix:")
    started = time.perf_counter()
    loop_p = loop_tukey_hsd(matrix, L, np.random.default_rng(args.seed + 1))
    loop_time = time.perf_counter() - started
    started = time.perf_counter()
    small = randomised_tukey_hsd(matrix, run_names=pr_names, n_permutations=L, seed=args.seed)
    small_time = time.perf_counter() - started
    loop_per = loop_time / L
    vectorised_per = vectorised_time / B
    print(f"  loop, B={L}: {loop_time:.2f} s measured; extrapolated to B={B}: "
          f"{loop_per * B:.1f} s")
    print(f"  vectorised, B={B}: {vectorised_time:.2f} s; B={L}: {small_time:.2f} s")
    print(f"  per permutation: loop {loop_per * 1e3:.2f} ms, vectorised "
          f"{vectorised_per * 1e3:.3f} ms (at B={B}); ratio loop/vectorised "
          f"{loop_per / vectorised_per:.0f}x")

    print(f"agreement at the same B={L} (different random streams):")
    p_loop, p_vec = loop_p[upper], small.p_values[upper]
    difference = np.abs(p_loop - p_vec)
    pooled = (p_loop + p_vec) / 2
    se = np.sqrt(pooled * (1 - pooled) * 2 / L)
    z = np.divide(difference, se, out=np.zeros_like(difference), where=se > 0)
    band = 3 * math.sqrt(ALPHA * (1 - ALPHA) / L)
    far = (np.abs(p_loop - ALPHA) > band) & (np.abs(p_vec - ALPHA) > band)
    disagree = int(((p_loop < ALPHA) != (p_vec < ALPHA))[far].sum())
    print(f"  max |p_loop - p_vectorised| over {difference.size} pairs: "
          f"{difference.max():.4f} (mean {difference.mean():.4f})")
    print(f"  max |difference| / its Monte-Carlo standard error: {z.max():.2f}")
    print(f"  decisions at alpha={ALPHA} for the {int(far.sum())} pairs with both p outside "
          f"{ALPHA} +- {band:.3f}: {disagree} disagree")
    reference = hsd.p_values[upper]
    print(f"  max |p - p(vectorised, B={B})|: loop {np.abs(p_loop - reference).max():.4f}, "
          f"vectorised B={L} {np.abs(p_vec - reference).max():.4f}")


if __name__ == "__main__":
    main()
