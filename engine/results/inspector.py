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
from collections import defaultdict
from dataclasses import dataclass, field

from engine.metrics.adaptability import CATEGORIES, category_label, category_of, pattern_key
from engine.results.records import (LOOSE_METRIC, SCORER_MARK, ItemRecord, is_mixed_like,
                                    load_items, load_run, metric_order, parse_retrieved,
                                    setting_order)
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


def _default_mixed(settings: set[str]) -> str | None:
    if "mixed" in settings:
        return "mixed"
    mixed_like = sorted((s for s in settings if is_mixed_like(s)), key=setting_order)
    return mixed_like[0] if mixed_like else None


def _labels(by_setting: dict[str, ItemRecord], mixed: str | None) -> tuple[str, str] | None:
    if mixed is None:
        return None
    labels = [by_setting[s].loose if s in by_setting else None for s in ("base", "oracle", mixed)]
    if any(label is None for label in labels):
        return None
    return pattern_key(*labels), category_of(*labels)


def _in_range(value: float | None, lo: float | None, hi: float | None) -> bool:
    if lo is None and hi is None:
        return True
    if value is None:
        return False
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def items_for(store: Store, run_name: str, system: str | None = None,
              setting: str | None = None, category: str | None = None,
              pattern: str | None = None, language: str | None = None,
              source: str | None = None, metric: str | None = None,
              min_value: float | None = None, max_value: float | None = None,
              mixed_setting: str | None = None, limit: int = 200,
              offset: int = 0) -> list[ItemRow]:
    """A page of the run's items matching every filter given, ordered by system, query and
    setting. ``metric`` with ``min_value``/``max_value`` keeps items whose stored value of that
    metric lies in the closed range (items without a value are dropped by a range)."""
    if category is not None and category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r} (one of {', '.join(CATEGORIES)})")
    if pattern is not None and not _PATTERN.match(pattern):
        raise ValueError(f"pattern must look like b1o0m1, got {pattern!r}")
    if (min_value is not None or max_value is not None) and metric is None:
        raise ValueError("min_value/max_value need a metric")
    run = load_run(store, run_name)
    wanted = {LOOSE_METRIC} | ({metric} if metric else set())
    items = load_items(store, run, metrics=wanted)
    grouped: dict[tuple[str, int], dict[str, ItemRecord]] = defaultdict(dict)
    for item in items:
        grouped[(item.system, item.query_rowid)][item.setting] = item
    defaults = {sys_: _default_mixed({i.setting for i in items if i.system == sys_})
                for sys_ in {i.system for i in items}}

    selected: list[tuple[ItemRecord, str | None, tuple[str, str] | None]] = []
    for item in items:
        if system is not None and item.system != system:
            continue
        if setting is not None and item.setting != setting:
            continue
        if language is not None and item.language != language:
            continue
        if source is not None and item.source != source:
            continue
        if metric is not None and not _in_range(item.scores.get(metric), min_value, max_value):
            continue
        mixed = mixed_setting or (item.setting if is_mixed_like(item.setting)
                                  else defaults[item.system])
        labels = _labels(grouped[(item.system, item.query_rowid)], mixed)
        if pattern is not None and (labels is None or labels[0] != pattern):
            continue
        if category is not None and (labels is None or labels[1] != category):
            continue
        selected.append((item, mixed, labels))
    page = selected[offset:offset + limit]
    texts = _texts(store, [i.query_rowid for i, _, _ in page],
                   [i.generation_key for i, _, _ in page])
    return [ItemRow(i.system, i.setting, i.query_rowid, i.query_id,
                    texts["queries"].get(i.query_rowid, ""), i.language, i.source,
                    texts["responses"].get(i.generation_key), i.scores.get(LOOSE_METRIC),
                    metric, i.scores.get(metric) if metric else None,
                    mixed if labels else None, labels[0] if labels else None,
                    labels[1] if labels else None, i.truncated, i.error, i.generation_key)
            for i, mixed, labels in page]


def _texts(store: Store, query_rowids: list[int], keys: list[str | None]) -> dict[str, dict]:
    queries = {r[0]: r[1] for r in store.query_in(
        "SELECT id, text FROM queries WHERE id IN ({marks})", sorted(set(query_rowids)))}
    responses = {r[0]: r[1] for r in store.query_in(
        "SELECT key, text FROM generations WHERE key IN ({marks})", sorted({k for k in keys if k}))}
    return {"queries": queries, "responses": responses}


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
