"""The evaluation engine's metric functions: small, pure, each named after what it measures.

- :mod:`engine.metrics.answer`: per-generation answer metrics (MIRAGE EM/F1, BERGEN
  match/EM/F1/char3 recall) and :func:`score_generation`, which also scores
  :mod:`engine.metrics.language` (BERGEN correct language), :mod:`engine.metrics.no_answer`
  (RAG-QA Arena no-answer) and the citations :mod:`engine.metrics.response_format` reads.
- :mod:`engine.metrics.adaptability`: MIRAGE's NV / CA / CI / CM and overall, with CIs.
- :mod:`engine.metrics.retrieval`: P/R/F1/NDCG@k per query and averaged with CIs.
- :mod:`engine.metrics.definitions`: the recorded choices behind a report (retrieval gold
  definition, correct-language detector and rule, parity mode) and the header lines naming them.
- :mod:`engine.metrics.parity`: the README's parity table, read from each metric function's
  ``Reference:`` / ``Deviation:`` docstring paragraphs.

Definitions live in METRICS.md; confidence intervals come from :mod:`engine.stats`.
"""

from engine.metrics.adaptability import (
    CATEGORIES,
    CONTEXT_ACCEPTABLE,
    CONTEXT_INSENSITIVE,
    CONTEXT_MISINTERPRETED,
    NOISE_VULNERABLE,
    PATTERN_KEYS,
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
    ANSWER_MATCH_METRICS,
    CITATION_METRIC,
    LANGUAGE_VARIANTS,
    METRICS,
    SCORER_VERSION,
    Overlap,
    Score,
    bergen_em,
    bergen_f1,
    bergen_match,
    bergen_normalize,
    bergen_token_overlap,
    char3_recall,
    char3grams,
    em_loose,
    em_strict,
    mirage_f1,
    score_generation,
)
from engine.metrics.language import (
    LANGUAGE_METRICS,
    correct_language,
    detect_language,
    language_probability,
    language_verdict,
    primary_language,
)
from engine.metrics.no_answer import DECLINE_PHRASES, decline_reason, is_no_answer
from engine.metrics.response_format import parse_citations, split_reason_answer, strip_citations
from engine.metrics.retrieval import (
    DEFAULT_KS,
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
    "ANSWER_MATCH_METRICS", "AdaptabilityReport", "CATEGORIES", "CONTEXT_ACCEPTABLE",
    "CONTEXT_INSENSITIVE", "CONTEXT_MISINTERPRETED", "DEFAULT_KS", "NOISE_VULNERABLE",
    "PATTERN_KEYS", "CITATION_METRIC", "DECLINE_PHRASES", "LANGUAGE_METRICS",
    "LANGUAGE_VARIANTS", "METRICS",
    "Overlap", "SCORER_VERSION", "Score", "adaptability", "bergen_em", "bergen_f1",
    "bergen_match", "bergen_normalize", "bergen_token_overlap", "category_label", "category_of",
    "char3_recall", "char3grams", "context_acceptability", "context_insensitivity",
    "context_misinterpretation", "correct_language", "dcg_at_k", "decline_reason",
    "detect_language", "em_loose", "em_strict", "f1_at_k", "is_no_answer",
    "language_probability", "language_verdict", "mirage_f1", "ndcg_at_k", "ndcg_mirage_at_k",
    "noise_vulnerability", "overall_score", "parse_citations", "pattern_counts", "pattern_key",
    "precision_at_k", "primary_language", "recall_at_k", "retrieval_report", "retrieval_scores",
    "score_generation", "split_reason_answer", "strip_citations",
]
