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
from engine.runs.lookup import load_run
from engine.results.item_queries import SORT_KEYS, ItemQuery, items_sql
from engine.store import Store

_PATTERN = re.compile(r"^b[01]o[01]m[01]$")


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


def inspector_facets(store: Store, run_name: str) -> dict:
    """What run ``run_name``'s items offer to filter by (systems, settings, languages, sources,
    metrics), with its dataset and status: aggregate queries, no item loaded."""
    run = load_run(store, run_name)
    by_system = run_settings(store, run.id)

    def distinct(column: str) -> list[str]:
        return sorted(r[0] for r in store.query(
            f"SELECT DISTINCT q.{column} FROM run_items ri JOIN queries q "
            f"ON q.id = ri.query_rowid WHERE ri.run_id = ? AND q.{column} IS NOT NULL",
            (run.id,)))

    return {"systems": sorted(by_system),
            "settings": sorted({s for names in by_system.values() for s in names},
                               key=setting_order),
            "languages": distinct("language"), "sources": distinct("source"),
            "metrics": run_metrics(store, run.id), "dataset": run.dataset, "status": run.status}


def _check_filters(category: str | None, pattern: str | None, metric: str | None,
                   min_value: float | None, max_value: float | None) -> None:
    if category is not None and category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r} (one of {', '.join(CATEGORIES)})")
    if pattern is not None and not _PATTERN.match(pattern):
        raise ValueError(f"pattern must look like b1o0m1, got {pattern!r}")
    if (min_value is not None or max_value is not None) and metric is None:
        raise ValueError("min_value/max_value need a metric")


def items_for(store: Store, run_name: str, system: str | None = None,
              setting: str | None = None, category: str | None = None,
              pattern: str | None = None, language: str | None = None,
              source: str | None = None, metric: str | None = None,
              min_value: float | None = None, max_value: float | None = None,
              mixed_setting: str | None = None, limit: int = 200,
              offset: int = 0, search: str | None = None,
              after: tuple | None = None, sort: str | None = None,
              descending: bool = False) -> list[ItemRow]:
    """A page of the run's items matching every filter given, ordered by system, query and
    setting, or by ``sort`` (one of :data:`SORT_KEYS`, those three as the tiebreaker);
    ``descending`` reverses the whole order. ``metric`` with ``min_value``/``max_value``
    keeps items whose stored value of that metric lies in the closed range (items without a
    value are dropped by a range). ``search`` keeps items whose question or response contains
    the text, case-insensitive (or whose query id is it). ``after`` (:func:`item_cursor` of
    the last row shown) pages by key: the next page starts right after that row, as fast deep
    in the run as at its start; ``offset`` skips rows instead (slower deep in a big run)."""
    _check_filters(category, pattern, metric, min_value, max_value)
    _check_sort(sort)
    run = load_run(store, run_name)
    text, params = page_query(store, run.id, after=after, limit=limit, offset=offset,
                              sort=sort, descending=descending,
                              system=system, setting=setting, category=category,
                              pattern=pattern, language=language, source=source,
                              metric=metric, min_value=min_value, max_value=max_value,
                              mixed_setting=mixed_setting, search=search)
    return [item_row(r, metric) for r in store.query(text, tuple(params))]


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
    it with ``EXPLAIN QUERY PLAN``); ``limit`` None: every row from ``after`` on.

    The default order (and ``sort="system"``) walks the ``run_items_order`` index, forwards or
    backwards, and stops after a page. Another sort orders by ``(value, system, query,
    setting rank)``, all in one direction: the page after a cursor is a row-value
    comparison, and SQLite keeps only the best ``limit`` rows of the filtered items while it
    walks them (a top-N sort: bounded by the filtered items, no index of its own; only the
    default order, by system, is indexed)."""
    sql = items_sql(store, run_id, **filters)
    body, params = sql.body, list(sql.params)
    order = order_by(sql, sort, descending)
    if sort in (None, "system"):
        if after is not None:
            a_system, a_query, a_setting = after
            ge, le = ("<=", ">=") if descending else (">=", "<=")
            body += (f" AND (ri.system, ri.query_rowid) {ge} (?, ?) AND NOT (ri.system = ? AND "
                     f"ri.query_rowid = ? AND {sql.rank} {le} ?)")
            params += [a_system, a_query, a_system, a_query, sql.ranks.get(a_setting, -1)]
    else:
        key = sql.keys[sort]
        if after is not None:
            value, a_system, a_query, a_setting = after
            if sort == "setting":
                value = sql.ranks.get(value, -1)
            body += (f" AND ({key}, ri.system, ri.query_rowid, {sql.rank}) "
                     f"{'<' if descending else '>'} (?, ?, ?, ?)")
            params += [value, a_system, a_query, sql.ranks.get(a_setting, -1)]
        # the page's items first, sorted with only the joins the filters and the key need
        # (SQLite leaves out every other LEFT JOIN: each is on a unique key), then their
        # columns for those rows alone
        lean = sql.body if sort == "pattern" else sql.lean_body
        page = (f"SELECT ri.rowid AS item {lean}{body[len(sql.body):]} ORDER BY {order} "
                "LIMIT ? OFFSET ?", [*params, -1 if limit is None else limit, offset])
        return (f"SELECT {sql.columns} FROM ({page[0]}) page CROSS JOIN run_items ri "
                f"ON ri.rowid = page.item {sql.joins}ORDER BY {order}", page[1])
    return (f"SELECT {sql.columns} {body} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, -1 if limit is None else limit, offset])


def order_by(sql: ItemQuery, sort: str | None = None, descending: bool = False) -> str:
    """The ``ORDER BY`` terms of a view: ``sort``'s value (none for the default order, by
    system), then system, query and setting rank, all ascending or all descending."""
    direction = " DESC" if descending else ""
    tie = f"ri.system{direction}, ri.query_rowid{direction}, {sql.rank}{direction}"
    return tie if sort in (None, "system") else f"{sql.keys[sort]}{direction}, {tie}"


def count_query(store: Store, run_id: int, **filters) -> tuple[str, list]:
    """The SQL text and parameters that count :func:`items_for`'s matches."""
    sql = items_sql(store, run_id, search_first=True, **filters)
    return f"SELECT COUNT(*) {sql.lean_body}", list(sql.params)


def count_items_for(store: Store, run_name: str, **filters) -> int:
    """How many of the run's items match the filters of :func:`items_for` (one aggregate
    query; ``limit``, ``offset`` and ``after`` do not apply)."""
    _check_filters(filters.get("category"), filters.get("pattern"), filters.get("metric"),
                   filters.get("min_value"), filters.get("max_value"))
    run = load_run(store, run_name)
    text, params = count_query(store, run.id, **filters)
    return store.query(text, tuple(params))[0][0]


def _query_row(store: Store, dataset_id: int, query_id: str | int):
    if isinstance(query_id, int):
        rows = store.query("SELECT * FROM queries WHERE id = ? AND dataset_id = ?",
                           (query_id, dataset_id))
    else:
        rows = store.query("SELECT * FROM queries WHERE query_id = ? AND dataset_id = ?",
                           (query_id, dataset_id))
    if not rows:
        raise LookupError(f"the run's dataset has no query {query_id!r}")
    return rows[0]


def item_detail(store: Store, run_name: str, system: str, query_id: str | int) -> ItemDetail:
    """Everything behind one system's numbers on one query (``query_id``: the dataset's query
    id, or the query's rowid as an int)."""
    run = load_run(store, run_name)
    q = _query_row(store, run.dataset_id, query_id)
    rows = store.query(
        "SELECT ri.setting, ri.context, ri.truncated, ri.error, ri.generation_key, g.prompt, "
        "g.text, g.model_name, g.prompt_tokens, g.completion_tokens, g.seconds, "
        "g.finish_reason FROM run_items ri LEFT JOIN generations g ON g.key = ri.generation_key "
        "WHERE ri.run_id = ? AND ri.system = ? AND ri.query_rowid = ?",
        (run.id, system, q["id"]))
    if not rows:
        systems = [r[0] for r in store.query(
            "SELECT DISTINCT system FROM run_items WHERE run_id = ? ORDER BY system", (run.id,))]
        raise LookupError(f"run {run.name!r} has no items of system {system!r} for query "
                          f"{q['query_id']!r} (systems: {', '.join(systems) or 'none'})")
    settings = []
    for r in sorted(rows, key=lambda r: setting_order(r["setting"])):
        stored = store.query("SELECT metric, value, detail FROM scores WHERE generation_key = ? "
                             "AND query_rowid = ?", (r["generation_key"], q["id"])) \
            if r["generation_key"] else []
        order = {m: i for i, m in enumerate(metric_order(s["metric"] for s in stored))}
        scores = sorted((ScoreRow(s["metric"], s["value"], s["detail"]) for s in stored
                         if not s["metric"].startswith("_")), key=lambda s: order[s.metric])
        version = next((s["detail"] for s in stored if s["metric"] == SCORER_MARK), None)
        settings.append(SettingRow(
            r["setting"], json.loads(r["context"]) if r["context"] else None, r["prompt"],
            r["text"], scores, bool(r["truncated"]), r["error"], r["generation_key"],
            r["model_name"], r["prompt_tokens"], r["completion_tokens"], r["seconds"],
            r["finish_reason"], version))
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
    for r in store.query(
            "SELECT p.chunk_rowid, p.position, p.support, p.is_oracle, c.chunk_id, c.title, "
            "c.text FROM pool p JOIN chunks c ON c.id = p.chunk_rowid WHERE p.query_rowid = ? "
            "ORDER BY p.position IS NULL, p.position, c.chunk_id", (query_rowid,)):
        chunks[r["chunk_rowid"]] = ChunkRow(r["chunk_rowid"], r["chunk_id"], r["title"],
                                            r["text"], r["position"] is not None, r["position"],
                                            bool(r["support"]), bool(r["is_oracle"]))
    retrievers = sorted({label for s in settings
                         if (p := parse_retrieved(s.setting)) and (label := p[1])})
    extra: set[int] = set()
    ranked_by: dict[str, list] = {}
    for label in retrievers:
        row = store.query("SELECT ranked FROM retrievals WHERE retriever = ? AND query_rowid = ?",
                          (label, query_rowid))
        ranked_by[label] = json.loads(row[0][0]) if row else []
        extra |= {int(c) for c, _ in ranked_by[label] if int(c) not in chunks}
    for s in settings:
        extra |= {int(c) for c in (s.context or []) if int(c) not in chunks}
    if extra:
        ids = sorted(extra)
        for r in store.query("SELECT id, chunk_id, title, text FROM chunks WHERE id IN "
                             f"({', '.join('?' * len(ids))})", tuple(ids)):
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
