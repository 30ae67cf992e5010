"""Scores of stored rankings (MIRAGE, Park et al., §1 "Retrieval").

Scores. A retrieved chunk is relevant when it is in the query's gold set, which depends on the
gold definition (:mod:`engine.metrics.definitions`): ``oracle``, the pool rows with
``support = 1`` from the file (``support_source = 'label'``, MIRAGE's definition; the default),
or ``oracle+answer-match``, every pool row with ``support = 1``, including the siblings the
importer marked because they contain a gold answer (``support_source = 'answer-match'``).
Chunks of attached collections are never gold. P/R/F1/NDCG (standard and the reference variant,
``ndcg_mirage``) come from :mod:`engine.metrics.retrieval`. Queries without any relevant chunk
are kept (recall 0) and counted.

The pool's ``support_source`` column has been in the schema since its first migration, so every
workspace can tell the two apart; no migration was needed.
"""

from __future__ import annotations

import json
from typing import Sequence

from engine.datasets.catalog import resolve
from engine.metrics.definitions import (DEFAULT_GOLD, GOLD_WIDENED, DefinitionError,
                                        check_choice)
from engine.metrics.retrieval import DEFAULT_KS, retrieval_report
from engine.retrieval.index import dataset_label, label_name
from engine.store import Store
from engine.store.datasets import query_facets
from engine.store.indexes import (answer_match_count, rankings_of_dataset,
                                  retrievers_of_dataset, supporting_pool_rows)


def stored_retrievers(store: Store, dataset_ref: str) -> list[str]:
    """Labels of the retrievers with rankings stored for the dataset's queries."""
    return retrievers_of_dataset(store, resolve(store, dataset_ref))


def _file_labels_only(definition: str) -> bool:
    """Whether the gold ``definition`` keeps only the file's own support labels."""
    if check_choice("gold", definition) is None:
        raise DefinitionError("gold: a definition is required")
    return definition != GOLD_WIDENED


def gold_chunks(store: Store, dataset_id: int,
                definition: str = DEFAULT_GOLD) -> dict[int, set[int]]:
    """Each query's relevant chunks under the gold ``definition`` (``oracle``: its pool rows
    with ``support = 1`` from the file; ``oracle+answer-match``: every pool row with
    ``support = 1``). Queries without one are absent."""
    gold: dict[int, set[int]] = {}
    for q, c in supporting_pool_rows(store, dataset_id,
                                     file_labels_only=_file_labels_only(definition)):
        gold.setdefault(q, set()).add(c)
    return gold


def answer_match_rows(store: Store, dataset_id: int) -> int:
    """How many pool rows of the dataset are supporting only by answer match (the difference
    between the two gold definitions; 0: they agree)."""
    return answer_match_count(store, dataset_id)


def stored_rankings(store: Store, dataset_id: int, label: str, depth: int) -> dict[int, list[int]]:
    """The top ``depth`` chunk rowids of each stored ranking by retriever ``label`` on the
    dataset's queries, keyed by query rowid in the order the store returns them."""
    return {q: [c for c, _ in json.loads(ranked)[:depth]]
            for q, ranked in rankings_of_dataset(store, dataset_id, label)}


def _resolve_label(store: Store, dataset_ref: str, label: str) -> str:
    known = stored_retrievers(store, dataset_ref)
    if label in known or "#" in label:
        return label
    matches = [k for k in known if label_name(k) == label]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LookupError(f"no rankings stored for retriever {label!r} on {dataset_ref} "
                          f"(stored: {', '.join(known) or 'none'}); run `mirage-tui retrieve`")
    raise LookupError(f"{label!r} names several retrievers on {dataset_ref}: "
                      f"{', '.join(matches)}; pass the full label")


def retrieval_report_for(store: Store, dataset_ref: str, retriever_label: str,
                         ks: Sequence[int] = DEFAULT_KS, by: str | None = None,
                         n_boot: int = 1000, seed: int = 0, gold: str = DEFAULT_GOLD) -> dict:
    """P/R/F1/NDCG/NDCG-MIRAGE @ each k from the stored rankings, with 95% CIs
    (Clopper–Pearson for 0/1 scores, else a floored bootstrap: :func:`engine.stats.intervals`),
    against the ``gold`` definition (``oracle`` or ``oracle+answer-match``).

    Returns ``{"dataset", "retriever", "ks", "depth", "by", "gold", "answer_match_rows",
    "queries", "n", "no_gold", "missing", "metrics": {name: Estimate},
    "groups": {value: {"n", "no_gold", "metrics"}}}``:
    ``n`` queries scored (those with a stored ranking; ``missing`` others), ``no_gold`` of
    them without any relevant chunk (scored with recall 0). Each ranking is cut to max(ks)
    before scoring, so ``ndcg_mirage`` sorts the same top list as the reference.
    """
    if by not in (None, "language", "source"):
        raise ValueError(f"by must be 'language', 'source' or None, not {by!r}")
    ks = tuple(sorted(set(ks)))
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"ks must be positive ints, not {ks!r}")
    depth = ks[-1]
    dataset_id = resolve(store, dataset_ref)
    label = _resolve_label(store, dataset_ref, retriever_label)
    definition = gold
    gold_sets = gold_chunks(store, dataset_id, definition)
    rankings = stored_rankings(store, dataset_id, label, depth)
    queries = query_facets(store, dataset_id)
    groups: dict[str, list] = {}
    scored = []
    for row in queries:
        if row["id"] not in rankings:
            continue
        relevant = gold_sets.get(row["id"], set())
        item = ([int(c in relevant) for c in rankings[row["id"]]], len(relevant))
        scored.append(item)
        if by:
            groups.setdefault(row[by] or "?", []).append(item)

    def block(items: list) -> dict:
        return {"n": len(items), "no_gold": sum(1 for _, g in items if g == 0),
                "metrics": retrieval_report(items, ks, n_boot=n_boot, seed=seed)}

    overall = block(scored)
    return {"dataset": dataset_label(store, dataset_id), "retriever": label, "ks": list(ks),
            "depth": depth, "by": by, "gold": definition,
            "answer_match_rows": answer_match_rows(store, dataset_id),
            "queries": len(queries), "n": overall["n"],
            "no_gold": overall["no_gold"], "missing": len(queries) - overall["n"],
            "metrics": overall["metrics"],
            "groups": {name: block(items) for name, items in sorted(groups.items())}}


def report_json(report: dict) -> dict:
    """:func:`retrieval_report_for`'s result with each Estimate as ``{value, lo, hi, n}``."""
    def metrics(m: dict) -> dict:
        return {name: e.as_json() for name, e in m.items()}
    return {**report, "metrics": metrics(report["metrics"]),
            "groups": {g: {**b, "metrics": metrics(b["metrics"])}
                       for g, b in report["groups"].items()}}
