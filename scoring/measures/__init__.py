"""Every evaluation formula, as pure functions on plain types and numpy arrays
(docs/measures.md, docs/statistics.md); no Django. The one import is `submissions.formats`,
for the run files' vocabulary (`PassageKey`, the nugget marks), re-exported here."""

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
