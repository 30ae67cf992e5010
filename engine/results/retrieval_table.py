"""The run report's retrieval table (MIRAGE Table 2 shape): for every retriever the run used,
precision, recall, F1 and NDCG at each k over the run's queries, from the stored rankings and
the chosen gold definition (:mod:`engine.metrics.retrieval`), also split by query language and
source. Computed here; :mod:`engine.results.text` writes it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from engine.metrics.retrieval import DEFAULT_KS, retrieval_report
from engine.results.records import ItemRecord, parse_retrieved, retriever_name, setting_order
from engine.runs.lookup import RunInfo
from engine.stats import Estimate, estimates_json

UNKNOWN = "?"
"""The breakdown key for queries with no language (or no source)."""

Rankings = dict[str, dict[int, list[int]]]
"""retriever label -> query rowid -> the top chunk rowids of its stored ranking."""


@dataclass(frozen=True)
class RetrievalGroup:
    """A retriever's scores over some queries: ``n`` of them, and ``metrics`` (``p@1``, …: an
    :class:`~engine.stats.Estimate` each)."""

    n: int
    metrics: dict[str, Estimate]

    def as_json(self) -> dict[str, Any]:
        return {"n": self.n, "metrics": estimates_json(self.metrics)}


@dataclass(frozen=True)
class RetrievalRow:
    """One retriever of the table: its label and name, the run's queries it scored (``n``),
    those with no stored ranking (``missing``) or no gold chunk (``no_gold``), the ``ks``, the
    ``metrics`` over all of them and per query language and source."""

    retriever: str
    retriever_name: str
    n: int
    missing: int
    no_gold: int
    ks: tuple[int, ...]
    metrics: dict[str, Estimate]
    by_language: dict[str, RetrievalGroup]
    by_source: dict[str, RetrievalGroup]

    def by(self, attr: str) -> dict[str, RetrievalGroup]:
        """The groups of breakdown ``attr`` (``language`` or ``source``)."""
        return self.by_language if attr == "language" else self.by_source

    def as_json(self) -> dict[str, Any]:
        return {"retriever": self.retriever, "retriever_name": self.retriever_name,
                "n": self.n, "missing": self.missing, "no_gold": self.no_gold,
                "ks": list(self.ks), "metrics": estimates_json(self.metrics),
                **{f"by_{attr}": {g: group.as_json() for g, group in self.by(attr).items()}
                   for attr in ("language", "source")}}


def group_key(value: str | None) -> str:
    """A breakdown's key: the value, or :data:`UNKNOWN`."""
    return value if value else UNKNOWN


def run_retrievers(run: RunInfo, items: Iterable[ItemRecord]) -> list[str]:
    """Retriever labels the run used: from its ``retrieved@k:label`` settings, in order."""
    return retrievers(run, {i.setting for i in items})


def retrievers(run: RunInfo, settings: Iterable[str]) -> list[str]:
    """Retriever labels of the ``retrieved@k:label`` settings among ``settings``, in setting
    order (settings without a label: the ones the run's config names)."""
    labels: list[str] = []
    settings = sorted(set(settings), key=setting_order)
    for setting in settings:
        retrieved = parse_retrieved(setting)
        if retrieved and retrieved[1] and retrieved[1] not in labels:
            labels.append(retrieved[1])
    if not labels:  # "retrieved@k" without a label: the config names the retriever(s)
        configured = run.config.get("retrievers") or []
        if any(parse_retrieved(s) for s in settings):
            labels = [str(r) for r in configured]
    return labels


def _relevances(ranking: dict[int, list[int]], gold: dict[int, set[int]],
                queries: Iterable[int]) -> dict[int, tuple[list[int], int]]:
    """``{query_rowid: (relevances of the ranked chunks, |gold|)}`` for the run's queries
    that have a ranking. Relevant: a chunk in the query's gold set (MIRAGE §1; which rows
    count depends on the gold definition, :func:`engine.retrieval.scores.gold_chunks`);
    |gold| counts them."""
    wanted = set(queries)
    return {q: ([int(chunk in gold.get(q, ())) for chunk in ranked], len(gold.get(q, ())))
            for q, ranked in ranking.items() if q in wanted}


def retrieval_table(rankings: Rankings, gold: dict[int, set[int]], queries: list[int],
                     facts: dict[int, ItemRecord], n_boot: int, seed: int,
                     ks: tuple[int, ...] = DEFAULT_KS) -> list[RetrievalRow]:
    """One :class:`RetrievalRow` per retriever: P/R/F1/NDCG@k over the queries with a ranking
    (relevant: in ``gold``), with 95% CIs and n, and the same per query language and
    source."""
    table = []
    for label, ranking in rankings.items():
        per_query = _relevances(ranking, gold, queries)
        no_gold = sum(1 for _, n_gold in per_query.values() if n_gold == 0)
        whole = _group(list(per_query.values()), ks, n_boot, seed)
        by = {}
        for attr in ("language", "source"):
            groups: dict[str, list] = defaultdict(list)
            for q, row in per_query.items():
                groups[group_key(getattr(facts[q], attr))].append(row)
            by[attr] = {g: _group(rows, ks, n_boot, seed) for g, rows in sorted(groups.items())}
        table.append(RetrievalRow(label, retriever_name(label), whole.n,
                                  len(queries) - len(per_query), no_gold, tuple(ks),
                                  whole.metrics, by["language"], by["source"]))
    return table


def _group(rows: list, ks: tuple[int, ...], n_boot: int, seed: int) -> RetrievalGroup:
    """The scores over ``rows`` (one per query)."""
    est = retrieval_report(rows, ks, n_boot=n_boot, seed=seed)
    return RetrievalGroup(len(rows), est)
