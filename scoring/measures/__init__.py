"""Every evaluation formula of the service, as pure functions on plain types and numpy
arrays (DESIGN.md section 6). Nothing here imports Django or an app; the one package
imported from outside is the lowest pure one, `submissions.formats`, for the vocabulary
the run files define (`PassageKey`, the nugget marks B/R/N), re-exported here.

- `ac`: accuracy, nugget precision, O/U/R_O/R_U/HMR, ECE, Brier (R2C2 AC runs)
- `qrels`: PR qrels derived from marked AC runs
- `ranking`: nDCG@k through pytrec_eval; Q-measure, nERR@k, MSnDCG@k in numpy
- `stats`, `hsd`: CIs, paired t-test, randomised Tukey HSD, two-way ANOVA, topic set
  size design, Kendall's tau, Spearman's rho, Cohen's kappa
- `rubric`: RUBRIC / EXAM++ labels, Rubric-Qrels and Rubric-Cover@k
"""

from __future__ import annotations

from .ac import AcQuestionScore, AcRunScores, JudgedAnswer, score_ac_run
from .common import QuestionScores
from .hsd import PairwiseComparison, TukeyHsdResult, randomised_tukey_hsd
from .qrels import MarkedNugget, PassageKey, derive_pr_qrels, pr_qrels_lines
from .ranking import PrRunScores, score_pr_run, trec_ndcg_cut

__all__ = [
    "AcQuestionScore",
    "AcRunScores",
    "JudgedAnswer",
    "MarkedNugget",
    "PairwiseComparison",
    "PassageKey",
    "PrRunScores",
    "QuestionScores",
    "TukeyHsdResult",
    "derive_pr_qrels",
    "pr_qrels_lines",
    "randomised_tukey_hsd",
    "score_ac_run",
    "score_pr_run",
    "trec_ndcg_cut",
]
