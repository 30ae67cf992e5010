"""The rows behind every number of a run report, for the UI's inspector.

:func:`items_for` lists run items (one per system × setting × query) filtered by what a report
cell means: a setting, an adaptability category or (b, o, m) pattern, a language, a source, or a
metric's value range. :func:`item_detail` opens one system's query: the query and its golds, the
pool (oracle marked) with each retriever's ranks, and per setting the exact prompt sent, the
response, and every score with its reason.

Category and pattern of an item (MIRAGE §1) come from its system's base, oracle and mixed-like
EM_loose labels for the same query. The mixed-like setting is ``mixed_setting`` when given,
else the item's own setting when that is mixed-like (``mixed``, ``retrieved@…``), else ``mixed``
(or, when the system has no ``mixed``, its first mixed-like setting).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from engine.metrics.adaptability import (CATEGORIES, category_label, category_of,
                                         pattern_key)
from engine.results.records import (LOOSE_METRIC, SCORER_MARK, is_mixed_like, metric_order,
                                    parse_retrieved, run_metrics, run_settings, setting_order)
from engine.results.item_queries import SORT_KEYS, items_sql
from engine.store import Store
from engine.runs.lookup import RunInfo
from engine.store import datasets as dataset_rows
from engine.store import items as stored
from engine.store.item_queries import count_of, count_sql, page_rows, page_sql

_PATTERN = re.compile(r"^b[01]o[01]m[01]$")
CUT_FILTERS = ("limit", "thinking")
"""``cut``: answers cut at the token limit; only those cut while thinking."""


@dataclass
class ItemRow:
    """One run item as the inspector lists it."""

    system: str
    setting: str
    query_rowid: int
    query_id: str
    query: str
    language: str | None
    source: str | None
    response: str | None
    em_loose: float | None
    metric: str | None          # the metric asked for, and its value
    value: float | None
    mixed_setting: str | None   # which setting played mixed for pattern/category
    pattern: str | None         # "b1o0m1", None when one of the three labels is missing
    category: str | None        # "noise_vulnerable", ...
    truncated: bool
    error: str | None
    generation_key: str | None


@dataclass
class ScoreRow:
    metric: str
    value: float | None
    detail: str | None


@dataclass
class ChunkRow:
    chunk_rowid: int
    chunk_id: str
    title: str | None
    text: str
    in_pool: bool               # False: retrieved from outside the query's pool
    position: int | None        # 0-based place in the pool
    support: bool
    is_oracle: bool
    ranks: dict[str, int] = field(default_factory=dict)      # retriever -> 1-based rank
    scores: dict[str, float] = field(default_factory=dict)   # retriever -> retrieval score
    in_context_of: list[str] = field(default_factory=list)   # settings that were given it


@dataclass
class SettingRow:
    setting: str
    context: list[int] | None   # chunk rowids given as context, in order
    prompt: str | None          # exactly what was sent
    response: str | None
    scores: list[ScoreRow]
    truncated: bool
    error: str | None
    generation_key: str | None
    model_name: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None
    finish_reason: str | None = None
    scorer_version: str | None = None
    reasoning: str = ""         # a reasoning model's thinking, apart from the response
    reasoning_tokens: int = 0
    thinking_cut: bool = False  # the thinking never closed: the response is empty


@dataclass
class ItemDetail:
    run: str
    system: str
    query_rowid: int
    query_id: str
    query: str
    language: str | None
    source: str | None
    answers: list[str]
    reference_answer: str | None
    pool: list[ChunkRow]
    settings: list[SettingRow]
    adaptability: dict[str, dict]  # mixed-like setting -> {pattern, category, label}


def sort_value(row: "ItemRow", sort: str):
    """The value ``row`` sorts by under ``sort`` (one of :data:`SORT_KEYS`), as SQL sees it."""
    values = {"system": row.system, "setting": row.setting, "query": row.query_id,
              "language": row.language or "",
              "em": float("-inf") if row.em_loose is None else row.em_loose,
              "pattern": row.pattern or "", "question": row.query,
              "response": row.response or ""}
    return values[sort]


def item_cursor(row: "ItemRow", sort: str | None = None) -> tuple:
    """The ``after`` of :func:`items_for` for the page that follows ``row``: ``(system,
    query_rowid, setting)`` in the default order, ``(value, system, query_rowid, setting)``
    under another sort."""
    key = (row.system, row.query_rowid, row.setting)
    return key if sort in (None, "system") else (sort_value(row, sort), *key)


def _check_sort(sort: str | None) -> None:
    if sort is not None and sort not in SORT_KEYS:
        raise ValueError(f"unknown sort {sort!r} (one of {', '.join(SORT_KEYS)})")


def inspector_facets(store: Store, run: RunInfo) -> dict:
    """What the run's items offer to filter by (systems, settings, languages, sources,
    metrics), with its dataset and status: aggregate queries, no item loaded."""
    by_system = run_settings(store, run.id)
    return {"systems": sorted(by_system),
            "settings": sorted({s for names in by_system.values() for s in names},
                               key=setting_order),
            "languages": stored.run_query_values(store, run.id, "language"),
            "sources": stored.run_query_values(store, run.id, "source"),
            "metrics": run_metrics(store, run.id), "dataset": run.dataset, "status": run.status}


def _check_filters(category: str | None, pattern: str | None, metric: str | None,
                   min_value: float | None, max_value: float | None,
                   cut: str | None = None) -> None:
    if cut is not None and cut not in CUT_FILTERS:
        raise ValueError(f"unknown cut filter {cut!r} (one of {', '.join(CUT_FILTERS)})")
    if category is not None and category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r} (one of {', '.join(CATEGORIES)})")
    if pattern is not None and not _PATTERN.match(pattern):
        raise ValueError(f"pattern must look like b1o0m1, got {pattern!r}")
    if (min_value is not None or max_value is not None) and metric is None:
        raise ValueError("min_value/max_value need a metric")


def items_for(store: Store, run: RunInfo, system: str | None = None,
              setting: str | None = None, category: str | None = None,
              pattern: str | None = None, language: str | None = None,
              source: str | None = None, metric: str | None = None,
              min_value: float | None = None, max_value: float | None = None,
              mixed_setting: str | None = None, limit: int = 200,
              offset: int = 0, search: str | None = None,
              after: tuple | None = None, sort: str | None = None,
              descending: bool = False, cut: str | None = None) -> list[ItemRow]:
    """A page of the run's items matching every filter given, ordered by system, query and
    setting, or by ``sort`` (one of :data:`SORT_KEYS`, those three as the tiebreaker);
    ``descending`` reverses the whole order. ``metric`` with ``min_value``/``max_value``
    keeps items whose stored value of that metric lies in the closed range (items without a
    value are dropped by a range). ``search`` keeps items whose question or response contains
    the text, case-insensitive (or whose query id is it). ``after`` (:func:`item_cursor` of
    the last row shown) pages by key: the next page starts right after that row, as fast deep
    in the run as at its start; ``offset`` skips rows instead (slower deep in a big run).
    ``cut`` (one of :data:`CUT_FILTERS`) keeps the answers cut at the token limit
    (``'limit'``), or only those cut while the model was still thinking (``'thinking'``)."""
    _check_filters(category, pattern, metric, min_value, max_value, cut)
    _check_sort(sort)
    text, params = page_query(store, run.id, after=after, limit=limit, offset=offset,
                              sort=sort, descending=descending,
                              system=system, setting=setting, category=category,
                              pattern=pattern, language=language, source=source,
                              metric=metric, min_value=min_value, max_value=max_value,
                              mixed_setting=mixed_setting, search=search, cut=cut)
    return [item_row(r, metric) for r in page_rows(store, (text, params))]


def item_row(r, metric: str | None = None) -> ItemRow:
    """One row of :func:`page_query` as an :class:`ItemRow`."""
    pat = r["pattern"]
    category_ = category_of(int(pat[1]), int(pat[3]), int(pat[5])) if pat else None
    return ItemRow(r["system"], r["setting"], r["query_rowid"], r["query_id"],
                   r["query"] or "", r["language"], r["source"], r["response"],
                   r["em_loose"], metric, r["value"], r["mixed"] if pat else None,
                   pat, category_, bool(r["truncated"]), r["error"], r["generation_key"])


def page_query(store: Store, run_id: int, *, after: tuple | None = None,
               limit: int | None = 200, offset: int = 0, sort: str | None = None,
               descending: bool = False, **filters) -> tuple[str, list]:
    """The SQL text and parameters of one page of :func:`items_for` (the query-plan test reads
    it with ``EXPLAIN QUERY PLAN``): :func:`engine.store.item_queries.page_sql` of the
    filters' :func:`~engine.results.item_queries.items_sql`."""
    return page_sql(items_sql(store, run_id, **filters), after=after, limit=limit,
                    offset=offset, sort=sort, descending=descending)


def count_query(store: Store, run_id: int, **filters) -> tuple[str, list]:
    """The SQL text and parameters that count :func:`items_for`'s matches."""
    return count_sql(items_sql(store, run_id, search_first=True, **filters))


def count_items_for(store: Store, run: RunInfo, **filters) -> int:
    """How many of the run's items match the filters of :func:`items_for` (one aggregate
    query; ``limit``, ``offset`` and ``after`` do not apply)."""
    _check_filters(filters.get("category"), filters.get("pattern"), filters.get("metric"),
                   filters.get("min_value"), filters.get("max_value"), filters.get("cut"))
    return count_of(store, count_query(store, run.id, **filters))


def _query_row(store: Store, dataset_id: int, query_id: str | int):
    row = dataset_rows.query_row(store, dataset_id, query_id)
    if row is None:
        raise LookupError(f"the run's dataset has no query {query_id!r}")
    return row


def item_detail(store: Store, run: RunInfo, system: str, query_id: str | int) -> ItemDetail:
    """Everything behind one system's numbers on one query (``query_id``: the dataset's query
    id, or the query's rowid as an int)."""
    q = _query_row(store, run.dataset_id, query_id)
    rows = stored.setting_rows(store, run.id, system, q["id"])
    if not rows:
        systems = stored.run_systems(store, run.id)
        raise LookupError(f"run {run.name!r} has no items of system {system!r} for query "
                          f"{q['query_id']!r} (systems: {', '.join(systems) or 'none'})")
    settings = []
    for r in sorted(rows, key=lambda r: setting_order(r["setting"])):
        rows_ = stored.generation_scores(store, r["generation_key"], q["id"]) \
            if r["generation_key"] else []
        order = {m: i for i, m in enumerate(metric_order(s["metric"] for s in rows_))}
        scores = sorted((ScoreRow(s["metric"], s["value"], s["detail"]) for s in rows_
                         if not s["metric"].startswith("_")), key=lambda s: order[s.metric])
        version = next((s["detail"] for s in rows_ if s["metric"] == SCORER_MARK), None)
        settings.append(SettingRow(
            r["setting"], json.loads(r["context"]) if r["context"] else None, r["prompt"],
            r["text"], scores, bool(r["truncated"]), r["error"], r["generation_key"],
            r["model_name"], r["prompt_tokens"], r["completion_tokens"], r["seconds"],
            r["finish_reason"], version, r["reasoning"] or "", r["reasoning_tokens"] or 0,
            bool(r["thinking_cut"])))
    return ItemDetail(run.name, system, q["id"], q["query_id"], q["text"], q["language"],
                      q["source"], json.loads(q["answers"]), q["reference_answer"],
                      _chunks(store, q["id"], settings), settings,
                      _adaptability(settings))


def _adaptability(settings: list[SettingRow]) -> dict[str, dict]:
    loose = {}
    for s in settings:
        value = next((sc.value for sc in s.scores if sc.metric == LOOSE_METRIC), None)
        if value is not None:
            loose[s.setting] = int(round(value))
    out = {}
    for s in settings:
        if not is_mixed_like(s.setting):
            continue
        labels = [loose.get(name) for name in ("base", "oracle", s.setting)]
        if any(label is None for label in labels):
            continue
        category = category_of(*labels)
        out[s.setting] = {"pattern": pattern_key(*labels), "category": category,
                          "label": category_label(category, s.setting)}
    return out


def _chunks(store: Store, query_rowid: int, settings: list[SettingRow]) -> list[ChunkRow]:
    chunks: dict[int, ChunkRow] = {}
    for r in dataset_rows.pool_rows(store, query_rowid):
        chunks[r["chunk_rowid"]] = ChunkRow(r["chunk_rowid"], r["chunk_id"], r["title"],
                                            r["text"], r["position"] is not None, r["position"],
                                            bool(r["support"]), bool(r["is_oracle"]))
    retrievers = sorted({label for s in settings
                         if (p := parse_retrieved(s.setting)) and (label := p[1])})
    extra: set[int] = set()
    ranked_by: dict[str, list] = {}
    for label in retrievers:
        ranked = stored.ranked_json(store, label, query_rowid)
        ranked_by[label] = json.loads(ranked) if ranked is not None else []
        extra |= {int(c) for c, _ in ranked_by[label] if int(c) not in chunks}
    for s in settings:
        extra |= {int(c) for c in (s.context or []) if int(c) not in chunks}
    if extra:
        ids = sorted(extra)
        for r in stored.chunk_rows(store, ids):
            chunks[r["id"]] = ChunkRow(r["id"], r["chunk_id"], r["title"], r["text"], False,
                                       None, False, False)
    for label, ranked in ranked_by.items():
        for rank, (chunk, score) in enumerate(ranked, start=1):
            if int(chunk) in chunks:
                chunks[int(chunk)].ranks[label] = rank
                chunks[int(chunk)].scores[label] = score
    for s in settings:
        for chunk in s.context or []:
            if int(chunk) in chunks:
                chunks[int(chunk)].in_context_of.append(s.setting)
    pool = [c for c in chunks.values() if c.position is not None or c.support or c.is_oracle]
    in_pool = {c.chunk_rowid for c in pool}
    others = [c for c in chunks.values() if c.chunk_rowid not in in_pool]
    others.sort(key=lambda c: (min(c.ranks.values(), default=10**9), c.chunk_rowid))
    return pool + others
