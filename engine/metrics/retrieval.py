"""Retrieval metrics per query, and their means over queries (MIRAGE, Park et al., §1 retrieval).

A query's ranked list is given as its relevances (1 if the chunk at that rank is relevant,
i.e. belongs to the query and has ``support == 1``; else 0), best rank first, together with
|gold|, the number of relevant chunks the query has. Ranks start at 1.

Where the MIRAGE reference code (``retriever.py``, ``Retriever_Evaluator``) differs from the
textbook, both are offered and named: :func:`ndcg_at_k` is standard NDCG;
:func:`ndcg_mirage_at_k` reproduces the reference number so published tables can be matched.
"""

from __future__ import annotations

import inspect
import math
from typing import Sequence

from engine.stats import Estimate, intervals

DEFAULT_KS = (1, 3, 5)

RANKING_DEVIATION = (
    "Deviation: the mean over queries gets a 95% interval and n; the gold set follows the "
    "recorded definition (``oracle``, the file's, by default); chunks are stored once per "
    "text, so a ranking never holds one text twice (MIRAGE's pool repeats some texts under "
    "other queries, and its ranking counts such a copy as not relevant).")
"""What P@k, R@k, F1@k and NDCG(ref)@k do differently from the reference, alike."""


def _ranking_deviation(metric):
    """Ends ``metric``'s docstring with :data:`RANKING_DEVIATION` (the parity table reads it)."""
    if metric.__doc__ is not None:                 # None under python -OO
        metric.__doc__ = inspect.cleandoc(metric.__doc__) + "\n" + RANKING_DEVIATION + "\n"
    return metric


def _hits(relevances: Sequence[float], k: int) -> float:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return float(sum(relevances[:k]))


@_ranking_deviation
def precision_at_k(relevances: Sequence[float], k: int) -> float:
    """P@k (MIRAGE §1): relevant chunks in the top k, divided by k.

    Divides by k even when fewer than k chunks were retrieved, as the reference does.

    Reference: MIRAGE ``retriever.py`` (``Retriever_Evaluator.evaluate_results_at_k``,
    ``precision``).
    """
    return _hits(relevances, k) / k


@_ranking_deviation
def recall_at_k(relevances: Sequence[float], k: int, n_gold: int) -> float:
    """R@k (MIRAGE §1): relevant chunks in the top k, divided by |gold|; 0 when there is no gold.

    Reference: MIRAGE ``retriever.py`` (``Retriever_Evaluator.evaluate_results_at_k``,
    ``recall``).
    """
    hits = _hits(relevances, k)
    return hits / n_gold if n_gold > 0 else 0.0


@_ranking_deviation
def f1_at_k(relevances: Sequence[float], k: int, n_gold: int) -> float:
    """F1@k (MIRAGE §1): the harmonic mean of P@k and R@k, 0 when both are 0.

    Reference: MIRAGE ``retriever.py`` (``Retriever_Evaluator.calculate_f1``).
    """
    p = precision_at_k(relevances, k)
    r = recall_at_k(relevances, k, n_gold)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def dcg_at_k(relevances: Sequence[float], k: int) -> float:
    """DCG@k = sum over ranks i = 1..k of rel_i / log2(i + 1)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return float(sum(rel / math.log2(i + 1) for i, rel in enumerate(relevances[:k], start=1)))


def ndcg_at_k(relevances: Sequence[float], k: int, n_gold: int) -> float:
    """Standard NDCG@k (MIRAGE §1, textbook form): DCG@k over the ideal DCG of the gold set.

    The ideal ranking puts min(k, |gold|) relevant chunks first; 0 when there is no gold.
    This differs on purpose from the MIRAGE reference code; see :func:`ndcg_mirage_at_k`.

    Reference: MIRAGE §1 (the paper's NDCG); ``retriever.py`` computes another ideal.
    Deviation: the ideal DCG comes from the gold set, not from the retrieved list (textbook
    NDCG); shown beside the reference number, ``NDCG(ref)``.
    """
    ideal = dcg_at_k([1] * min(k, n_gold), k) if n_gold > 0 else 0.0
    return dcg_at_k(relevances, k) / ideal if ideal > 0 else 0.0


@_ranking_deviation
def ndcg_mirage_at_k(relevances: Sequence[float], k: int) -> float:
    """NDCG@k as MIRAGE's reference code computes it (``Retriever_Evaluator.calculate_ndcg``).

    The ideal DCG comes from sorting the *retrieved* relevances (the whole list passed in, as the
    reference sorts its full top-5 before cutting to k), not from the gold set; so one hit at
    rank 1 scores 1.0 however many gold chunks the query has, and a query with no hit scores 0.
    Pass the full retrieved list, not only its top k, to reproduce the reference number.

    Reference: MIRAGE ``retriever.py`` (``Retriever_Evaluator.calculate_ndcg``).
    """
    ideal = dcg_at_k(sorted(relevances, reverse=True), k)
    return dcg_at_k(relevances, k) / ideal if ideal > 0 else 0.0


def retrieval_scores(relevances: Sequence[float], n_gold: int,
                     ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Every retrieval metric of one query: ``p@k``, ``r@k``, ``f1@k``, ``ndcg@k`` and
    ``ndcg_mirage@k`` for each k in ``ks``."""
    rel = [float(r) for r in relevances]
    scores: dict[str, float] = {}
    for k in ks:
        scores[f"p@{k}"] = precision_at_k(rel, k)
        scores[f"r@{k}"] = recall_at_k(rel, k, n_gold)
        scores[f"f1@{k}"] = f1_at_k(rel, k, n_gold)
        scores[f"ndcg@{k}"] = ndcg_at_k(rel, k, n_gold)
        scores[f"ndcg_mirage@{k}"] = ndcg_mirage_at_k(rel, k)
    return scores


def retrieval_report(per_query: Sequence[tuple[Sequence[float], int]],
                     ks: Sequence[int] = DEFAULT_KS, n_boot: int = 1000,
                     seed: int = 0) -> dict[str, Estimate]:
    """The mean of each retrieval metric over queries, with a 95% CI over queries.

    The interval follows the metric's values (:func:`engine.stats.intervals`): Clopper–Pearson
    where every query scores 0 or 1 (P@1, R@1 with one gold chunk), else the percentile
    bootstrap over queries floored by Clopper–Pearson (F1, NDCG, P@k), never zero-width.

    ``per_query`` holds one ``(relevances, n_gold)`` pair per query. Keys are those of
    :func:`retrieval_scores` (``"p@1"``, ``"ndcg_mirage@5"``, ...); n is the number of queries.
    Bootstrapped metrics come from the same resamples of queries.
    """
    names = list(retrieval_scores([], 0, ks))
    columns: dict[str, list[float]] = {name: [] for name in names}
    for relevances, n_gold in per_query:
        for name, value in retrieval_scores(relevances, n_gold, ks).items():
            columns[name].append(value)
    return intervals(columns, n_boot=n_boot, seed=seed)
