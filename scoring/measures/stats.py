"""Statistics over a topic-by-run score matrix (a row per question, a column per run, as
NTCIR's tools take it), and agreement between leaderboards and between judges
(docs/statistics.md); the randomised Tukey HSD is in `hsd.py`, re-exported here."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special
from scipy import stats as sp_stats

from .hsd import PairwiseComparison, TukeyHsdResult, randomised_tukey_hsd

__all__ = [
    "MeanCI",
    "PairedTTest",
    "PairwiseComparison",
    "RankCorrelation",
    "TukeyHsdResult",
    "TwoWayAnova",
    "cohen_kappa",
    "kendall_tau",
    "mean_ci",
    "paired_t_test",
    "randomised_tukey_hsd",
    "spearman_rho",
    "topic_set_size_ci",
    "topic_set_size_t_test",
    "two_way_anova",
]

TOO_FEW_SCORES = "need at least two scores, got {n}"
NOT_FINITE = "scores must be finite numbers"
NOT_PAIRED = "paired scores differ in length ({left} != {right})"
BAD_MATRIX = "a score matrix needs at least two topics and two runs, got shape {shape}"
BAD_LEVEL = "{name} must lie strictly between 0 and 1, got {value!r}"
NOT_POSITIVE = "{name} must be positive, got {value!r}"
DIFFERENT_RUNS = "the leaderboards rank different runs: {only}"
TOO_FEW_RUNS = "need at least two runs to correlate leaderboards, got {n}"
CONSTANT_LEADERBOARD = "a leaderboard whose scores are all equal has no ranking to correlate"
NOT_SAME_ITEMS = "the two judges labelled different numbers of items ({left} != {right})"
NO_ITEMS = "need at least one label from each judge"

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MeanCI:
    """A sample mean and its two-sided confidence interval [lower, upper]."""

    mean: float
    lower: float
    upper: float
    margin: float
    n: int
    confidence: float


@dataclass(frozen=True)
class PairedTTest:
    """Two-sided paired t-test of mean(a - b) = 0, with the CI of the mean difference."""

    mean_difference: float
    t_statistic: float
    p_value: float
    df: int
    lower: float
    upper: float


@dataclass(frozen=True)
class TwoWayAnova:
    """Two-way ANOVA without replication (topic x system), one score per cell;
    `residual_variance` (V_E = MS_residual) is what topic set size design starts from."""

    n_topics: int
    n_systems: int
    ss_system: float
    ss_topic: float
    ss_residual: float
    df_system: int
    df_topic: int
    df_residual: int
    ms_system: float
    ms_topic: float
    ms_residual: float
    f_system: float
    p_system: float
    f_topic: float
    p_topic: float

    @property
    def residual_variance(self) -> float:
        return self.ms_residual


@dataclass(frozen=True)
class RankCorrelation:
    """A rank correlation between two leaderboards and its two-sided p-value."""

    statistic: float
    p_value: float
    n_runs: int


def mean_ci(scores: npt.ArrayLike, *, confidence: float = 0.95) -> MeanCI:
    """Mean with a t interval: mean +- t(n-1; a/2) s / sqrt(n). Source: Student, Biometrika
    6(1), 1908; intervals beside means as Sakai, SIGIR Forum 48(1), 2014, recommends."""
    _check_level("confidence", confidence)
    x = _finite_vector(scores)
    n = x.size
    if n < 2:
        raise ValueError(TOO_FEW_SCORES.format(n=n))
    mean = float(x.mean())
    margin = float(sp_stats.t.ppf(0.5 + confidence / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return MeanCI(mean, mean - margin, mean + margin, margin, n, confidence)


#: Resamples of a bootstrap interval: enough for stable 2.5th and 97.5th percentiles.
BOOTSTRAP_RESAMPLES = 2000


def bootstrap_cis(matrix: npt.ArrayLike, *, confidence: float = 0.95,
                  resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> list[MeanCI]:
    """Each run's mean with a seeded bootstrap percentile interval over the questions of a
    topics x runs matrix; `margin` is half its width. Source: Efron and Tibshirani, 1993,
    chapter 13; why and how: docs/statistics.md, "Intervals"."""
    _check_level("confidence", confidence)
    scores = np.asarray(matrix, dtype=np.float64)
    if scores.ndim != 2 or not np.isfinite(scores).all():
        raise ValueError(NOT_FINITE)
    n = scores.shape[0]
    if n < 2:
        raise ValueError(TOO_FEW_SCORES.format(n=n))
    means = scores.mean(axis=0)
    if np.ptp(scores, axis=0).max(initial=0.0) == 0.0:
        lower = upper = means  # every run scored the same on every question
    else:
        resampled = _bootstrap_means(scores, resamples, seed)
        alpha = (1 - confidence) / 2
        low_quantile, high_quantile = np.quantile(resampled, [alpha, 1 - alpha], axis=0)
        # A run whose scores are all equal has a zero-width interval at its mean; and no
        # bound leaves the observed range by a rounding error of the resampled means.
        constant = np.ptp(scores, axis=0) == 0.0
        low, high = scores.min(axis=0), scores.max(axis=0)
        lower = np.where(constant, means, np.clip(low_quantile, low, high))
        upper = np.where(constant, means, np.clip(high_quantile, low, high))
    return [MeanCI(float(m), float(lo), float(hi), float(hi - lo) / 2, n, confidence)
            for m, lo, hi in zip(means, lower, upper, strict=True)]


#: Resamples drawn per call of the generator, as scipy.stats.bootstrap draws them with
#: batch=64 (this module's intervals were computed by it until they were vectorised).
_BOOTSTRAP_BATCH = 64
#: Multiply-adds per matrix product: OpenBLAS runs a product this small on one thread.
#: Its threads spin while they wait, and on a machine shared with other work a product
#: split over them took five times as long as on one.
_SINGLE_THREAD_PRODUCT = 2**18


def _bootstrap_means(scores: FloatArray, resamples: int, seed: int) -> FloatArray:
    """resample x run means: the resamples scipy.stats.bootstrap(batch=64) draws from
    `default_rng(seed)`, each resample's means as its question counts times the matrix."""
    rng = np.random.default_rng(seed)
    n, n_runs = scores.shape
    means = np.empty((resamples, n_runs), dtype=np.float64)
    step = max(1, _SINGLE_THREAD_PRODUCT // max(1, n * n_runs))
    for start in range(0, resamples, _BOOTSTRAP_BATCH):
        size = min(_BOOTSTRAP_BATCH, resamples - start)
        drawn = rng.integers(0, n, (size, n))
        drawn += np.arange(size)[:, None] * n
        counts = np.bincount(drawn.ravel(), minlength=size * n).reshape(size, n)
        # in floating point: numpy multiplies integer matrices without BLAS, 4x slower
        counts = counts.astype(np.float64)
        for first in range(0, size, step):
            rows = slice(start + first, start + min(first + step, size))
            np.matmul(counts[first : first + step], scores, out=means[rows])
    means /= n
    return means


def paired_t_test(a: npt.ArrayLike, b: npt.ArrayLike, *, confidence: float = 0.95) -> PairedTTest:
    """Two-sided paired t-test over topics (scipy's ttest_rel) with the CI of the mean
    difference (Sakai, SIGIR 2016). Equal differences give t = 0, p = 1 if all are 0, else
    t = +-inf, p = 0, where scipy would return NaN."""
    _check_level("confidence", confidence)
    x, y = _finite_vector(a), _finite_vector(b)
    if x.size != y.size:
        raise ValueError(NOT_PAIRED.format(left=x.size, right=y.size))
    if x.size < 2:
        raise ValueError(TOO_FEW_SCORES.format(n=x.size))
    d = x - y
    mean = float(d.mean())
    df = x.size - 1
    if np.all(d == d[0]):
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
        return PairedTTest(mean, t, 1.0 if mean == 0 else 0.0, df, mean, mean)
    result = sp_stats.ttest_rel(x, y)
    ci = result.confidence_interval(confidence_level=confidence)
    return PairedTTest(
        mean, float(result.statistic), float(result.pvalue), df, float(ci.low), float(ci.high)
    )


def two_way_anova(scores: npt.ArrayLike) -> TwoWayAnova:
    """Two-way ANOVA without replication on a topic-by-system matrix. Source: Sakai, "Topic set
    size design", IRJ 19(3), 2016, section 6. With a zero residual F is +inf (p = 0), or 0
    (p = 1) when its effect is zero too."""
    x = _matrix(scores)
    n, m = x.shape
    grand = x.mean()
    topic_means = x.mean(axis=1, keepdims=True)
    system_means = x.mean(axis=0, keepdims=True)
    ss_topic = float(m * ((topic_means - grand) ** 2).sum())
    ss_system = float(n * ((system_means - grand) ** 2).sum())
    ss_residual = float(((x - topic_means - system_means + grand) ** 2).sum())
    df_topic, df_system, df_residual = n - 1, m - 1, (n - 1) * (m - 1)
    ms_topic, ms_system = ss_topic / df_topic, ss_system / df_system
    ms_residual = ss_residual / df_residual
    f_system, p_system = _f_test(ms_system, ms_residual, df_system, df_residual)
    f_topic, p_topic = _f_test(ms_topic, ms_residual, df_topic, df_residual)
    return TwoWayAnova(
        n_topics=n,
        n_systems=m,
        ss_system=ss_system,
        ss_topic=ss_topic,
        ss_residual=ss_residual,
        df_system=df_system,
        df_topic=df_topic,
        df_residual=df_residual,
        ms_system=ms_system,
        ms_topic=ms_topic,
        ms_residual=ms_residual,
        f_system=f_system,
        p_system=p_system,
        f_topic=f_topic,
        p_topic=p_topic,
    )


def topic_set_size_ci(*, residual_variance: float, ci_width: float, alpha: float = 0.05) -> int:
    """Topics needed for the expected width of the 100(1 - alpha)% CI of a difference to be at
    most `ci_width`, from V_E. Source: Sakai, "Topic set size design", IRJ 19(3), 2016,
    sections 5 and 6, after Nagata 2003 (docs/statistics.md)."""
    _check_positive("residual_variance", residual_variance)
    _check_positive("ci_width", ci_width)
    _check_level("alpha", alpha)
    sd = math.sqrt(2.0 * residual_variance)

    def expected_width(n: int) -> float:
        c = math.sqrt(2.0 / (n - 1)) * math.exp(
            special.gammaln(n / 2) - special.gammaln((n - 1) / 2)
        )
        return float(2.0 * sp_stats.t.ppf(1 - alpha / 2, n - 1) * c * sd / math.sqrt(n))

    # Sakai's starting point: the normal approximation n' = 4 z^2 sigma_t^2 / delta^2,
    # which never exceeds the answer; search up (and, for safety, down) from it.
    z = float(sp_stats.norm.ppf(1 - alpha / 2))
    n = max(2, math.floor(4 * z * z * sd * sd / (ci_width * ci_width)))
    while expected_width(n) > ci_width:
        n += 1
    while n > 2 and expected_width(n - 1) <= ci_width:
        n -= 1
    return n


def topic_set_size_t_test(
    *,
    residual_variance: float,
    min_difference: float,
    alpha: float = 0.05,
    beta: float = 0.20,
) -> int:
    """Topics needed for a two-sided paired t-test at alpha to detect `min_difference` with
    power 1 - beta, exactly from the noncentral t. Source: Sakai, "Topic set size design",
    IRJ 19(3), 2016, section 4, who approximates it (docs/statistics.md)."""
    _check_positive("residual_variance", residual_variance)
    _check_positive("min_difference", min_difference)
    _check_level("alpha", alpha)
    _check_level("beta", beta)
    sd = math.sqrt(2.0 * residual_variance)

    def power(n: int) -> float:
        df = n - 1
        critical = float(sp_stats.t.ppf(1 - alpha / 2, df))
        shift = math.sqrt(n) * min_difference / sd
        return float(sp_stats.nct.sf(critical, df, shift) + sp_stats.nct.cdf(-critical, df, shift))

    z_alpha = float(sp_stats.norm.ppf(1 - alpha / 2))
    z_beta = float(sp_stats.norm.ppf(1 - beta))
    n = max(2, math.floor(((z_alpha + z_beta) * sd / min_difference) ** 2))
    while power(n) < 1 - beta:
        n += 1
    while n > 2 and power(n - 1) >= 1 - beta:
        n -= 1
    return n


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> RankCorrelation:
    """Kendall's tau-b between two leaderboards (run -> score) over the same runs. Source:
    Kendall, Biometrika 30, 1938 (ties as scipy's kendalltau); for comparing system rankings,
    Voorhees, IP&M 36(5), 2000."""
    x, y = _paired_leaderboards(a, b)
    result = sp_stats.kendalltau(x, y)
    return RankCorrelation(float(result.statistic), float(result.pvalue), x.size)


def spearman_rho(a: Mapping[str, float], b: Mapping[str, float]) -> RankCorrelation:
    """Spearman's rho between two leaderboards (run -> score) over the same runs: Pearson's r of
    the ranks, average ranks for ties (Spearman, Am. J. Psychology 15(1), 1904; scipy)."""
    x, y = _paired_leaderboards(a, b)
    result = sp_stats.spearmanr(x, y)
    return RankCorrelation(float(result.statistic), float(result.pvalue), x.size)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e) between two judges' labels of the same items
    (Cohen, Educational and Psychological Measurement 20(1), 1960); reported as 1 when both
    give every item one and the same label (p_e = 1)."""
    if len(a) != len(b):
        raise ValueError(NOT_SAME_ITEMS.format(left=len(a), right=len(b)))
    if not a:
        raise ValueError(NO_ITEMS)
    n = len(a)
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


def _paired_leaderboards(
    a: Mapping[str, float], b: Mapping[str, float]
) -> tuple[FloatArray, FloatArray]:
    only = sorted(set(a) ^ set(b))
    if only:
        raise ValueError(DIFFERENT_RUNS.format(only=", ".join(only)))
    runs = sorted(a)
    if len(runs) < 2:
        raise ValueError(TOO_FEW_RUNS.format(n=len(runs)))
    x = _finite_vector([a[run] for run in runs])
    y = _finite_vector([b[run] for run in runs])
    if np.all(x == x[0]) or np.all(y == y[0]):
        raise ValueError(CONSTANT_LEADERBOARD)
    return x, y


def _f_test(
    ms_effect: float, ms_residual: float, df_effect: int, df_residual: int
) -> tuple[float, float]:
    if ms_residual == 0:
        return (math.inf, 0.0) if ms_effect > 0 else (0.0, 1.0)
    f = ms_effect / ms_residual
    return f, float(sp_stats.f.sf(f, df_effect, df_residual))


def _finite_vector(values: npt.ArrayLike) -> FloatArray:
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError(NOT_FINITE)
    return x


def _matrix(scores: npt.ArrayLike) -> FloatArray:
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise ValueError(BAD_MATRIX.format(shape=x.shape))
    if not np.all(np.isfinite(x)):
        raise ValueError(NOT_FINITE)
    return x


def _check_level(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(BAD_LEVEL.format(name=name, value=value))


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(NOT_POSITIVE.format(name=name, value=value))
