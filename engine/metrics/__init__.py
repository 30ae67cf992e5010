"""The evaluation engine's metric functions: small, pure, each named after what it measures.

- :mod:`engine.metrics.answer`: per-generation answer metrics (MIRAGE EM/F1, BERGEN
  match/EM/F1/char3 recall/correct language, no-answer, citations) and :func:`score_generation`.
- :mod:`engine.metrics.adaptability`: MIRAGE's NV / CA / CI / CM and overall, with CIs.
- :mod:`engine.metrics.retrieval`: P/R/F1/NDCG@k per query and averaged with CIs.

Definitions live in METRICS.md; confidence intervals come from :mod:`engine.stats`.
"""

from engine.metrics.adaptability import (
    AdaptabilityReport,
    adaptability,
    category_label,
    category_of,
    context_acceptability,
    context_insensitivity,
    context_misinterpretation,
    noise_vulnerability,
    overall_score,
    pattern_counts,
    pattern_key,
)
from engine.metrics.answer import (
    SCORER_VERSION,
    Score,
    bergen_em,
    bergen_f1,
    bergen_match,
    bergen_normalize,
    bergen_token_overlap,
    char3_recall,
    correct_language,
    detect_language,
    em_loose,
    em_strict,
    is_no_answer,
    language_probability,
    mirage_f1,
    parse_citations,
    score_generation,
    split_reason_answer,
    strip_citations,
)
from engine.metrics.retrieval import (
    dcg_at_k,
    f1_at_k,
    ndcg_at_k,
    ndcg_mirage_at_k,
    precision_at_k,
    recall_at_k,
    retrieval_report,
    retrieval_scores,
)

__all__ = [
    "AdaptabilityReport", "SCORER_VERSION", "Score", "adaptability", "bergen_em", "bergen_f1",
    "bergen_match", "bergen_normalize", "bergen_token_overlap", "category_label", "category_of",
    "char3_recall", "context_acceptability", "context_insensitivity",
    "context_misinterpretation", "correct_language", "dcg_at_k", "detect_language", "em_loose",
    "em_strict", "f1_at_k", "is_no_answer", "language_probability", "mirage_f1", "ndcg_at_k",
    "ndcg_mirage_at_k", "noise_vulnerability", "overall_score", "parse_citations",
    "pattern_counts", "pattern_key", "precision_at_k", "recall_at_k", "retrieval_report",
    "retrieval_scores", "score_generation", "split_reason_answer", "strip_citations",
]
