"""Every evaluation formula of the service, as pure functions on plain types and numpy
arrays (docs/measures.md). Nothing here imports Django or an app; the one package
imported from outside is the lowest pure one, `submissions.formats`, for the vocabulary
the run files define (`PassageKey`, the nugget marks B/R/N), re-exported here.

- `ac`: accuracy, nugget precision, O/U/R_O/R_U/HMR, ECE, Brier (R2C2 AC runs)
- `qrels`: PR qrels derived from marked AC runs
- `ranking`: nDCG@k through pytrec_eval; Q-measure, nERR@k, MSnDCG@k in numpy
- `pr_track`: every ranking measure of every run of a track at once, nDCG included
- `stats`, `hsd`: CIs, paired t-test, randomised Tukey HSD, two-way ANOVA, topic set
  size design, Kendall's tau, Spearman's rho, Cohen's kappa
- `track_stats`: a snapshot's intervals, HSD and ANOVA on its question x run matrices
- `rubric`: RUBRIC / EXAM++ labels, Rubric-Qrels and the trec_eval measures on them,
  Rubric-Cover@k, n-EXAM, and the meta-evaluation against manual judgments
"""

from __future__ import annotations

from .ac import (
    AcQuestionColumns,
    AcQuestionScore,
    AcRunScores,
    JudgedAnswer,
    score_ac_run,
    score_ac_track,
)
from .common import QuestionScores
from .hsd import PairwiseComparison, TukeyHsdResult, randomised_tukey_hsd
from .pr_track import score_pr_track
from .qrels import MarkedNugget, PassageKey, derive_pr_qrels, pr_qrels_lines
from .ranking import PrRunScores, score_pr_run, trec_ndcg_cut
from .rubric import (
    LabelRule,
    RubricRunScores,
    grade_judgment_table,
    leaderboard_agreement,
    pooled_cover,
    qrels_kappa,
    rubric_qrels,
    rubric_qrels_lines,
    score_rubric_run,
)

__all__ = [
    "AcQuestionColumns",
    "AcQuestionScore",
    "AcRunScores",
    "JudgedAnswer",
    "LabelRule",
    "MarkedNugget",
    "PairwiseComparison",
    "PassageKey",
    "PrRunScores",
    "QuestionScores",
    "RubricRunScores",
    "TukeyHsdResult",
    "derive_pr_qrels",
    "grade_judgment_table",
    "leaderboard_agreement",
    "pooled_cover",
    "pr_qrels_lines",
    "qrels_kappa",
    "randomised_tukey_hsd",
    "rubric_qrels",
    "rubric_qrels_lines",
    "score_ac_run",
    "score_ac_track",
    "score_pr_run",
    "score_pr_track",
    "score_rubric_run",
    "trec_ndcg_cut",
]
