"""The item browser's data: the run's items as the Inspector lists them
(:func:`engine.results.inspector.items_for`, with their category and (b, o, m) pattern) and
each one opened as the Inspector opens it (:func:`engine.results.inspector.item_detail`: the
query, its golds, the pool with the oracle marked, the exact prompt, the response, every
score, a reasoning model's thinking), packed compactly: systems, settings, languages and
categories as indexes, each query and its pool once.

Beyond ``limit`` items, or beyond ``max_bytes`` packed (long passages pack less well), the page
carries a seeded sample of the run's queries (every item of a sampled query, so a query's base,
oracle and mixed stay together) and says so; the numbers of the report are always computed
over every item.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
from collections import defaultdict
from typing import Any

from engine.metrics.adaptability import CATEGORIES, category_label
from engine.results.inspector import count_items_for, item_detail, items_for
from engine.results.records import setting_order
from engine.store import Store
from engine.runs.lookup import RunInfo
from engine.store.items import run_query_rowids

ITEM_LIMIT = 2000
"""Items a page carries in full; a bigger run's page carries a sample of its queries."""

ITEM_BYTES = 1_200_000
"""The most the packed items may weigh (prompts repeat their passages, so 1,000 items of the
demo pool pack into about 0.3 MB); beyond it the sample of queries shrinks until they fit."""

_PAGE = 2000


def _rows(store: Store, run: RunInfo, wanted: set[int] | None, limit: int):
    """The Inspector's rows, page by page (keyset), keeping the sampled queries' items."""
    after = None
    kept = []
    while True:
        page = items_for(store, run, limit=_PAGE, after=after)
        kept += [r for r in page if wanted is None or r.query_rowid in wanted]
        if len(page) < _PAGE or (wanted is None and len(kept) >= limit):
            return kept[:limit] if wanted is None else kept
        last = page[-1]
        after = (last.system, last.query_rowid, last.setting)


def item_data(store: Store, run: RunInfo, limit: int = ITEM_LIMIT, seed: int = 0,
              max_bytes: int = ITEM_BYTES) -> dict[str, Any]:
    """The browser's data (see the module docstring) with ``total`` (the run's items),
    ``shown`` and ``sample`` (None, or the sampled and total query counts and the seed).
    Every item when there are at most ``limit`` and they pack into ``max_bytes``; else the
    items of the first queries of a seeded shuffle of the run's queries, as many as fit."""
    total = count_items_for(store, run)
    if total <= limit:
        data = _collect(store, run, None, limit)
        if len(pack(data)) <= max_bytes:
            return {**data, "total": total, "sample": None}
    queries = run_query_rowids(store, run.id)
    order = random.Random(seed).sample(queries, len(queries))
    keep = max(1, min(len(queries), int(limit // (total / max(len(queries), 1)))))
    data = _collect(store, run, set(order[:keep]), limit)
    while keep > 1 and (size := len(pack(data))) > max_bytes:
        keep = max(1, min(keep - 1, int(keep * max_bytes / size * 0.95)))
        data = _subset(data, set(order[:keep]))
    return {**data, "total": total,
            "sample": {"queries": keep, "of": len(queries), "seed": seed}}


def _subset(data: dict, wanted: set[int]) -> dict:
    items = [i for i in data["items"] if i["q"] in wanted]
    return {**data, "items": items, "shown": len(items),
            "queries": {q: v for q, v in data["queries"].items() if int(q) in wanted}}


def _collect(store: Store, run: RunInfo, wanted: set[int] | None, limit: int) -> dict:
    rows = _rows(store, run, wanted, limit)
    systems = sorted({r.system for r in rows})
    settings = sorted({r.setting for r in rows}, key=setting_order)
    languages = sorted({r.language or "?" for r in rows})
    index = {"sy": {s: i for i, s in enumerate(systems)},
             "se": {s: i for i, s in enumerate(settings)},
             "la": {s: i for i, s in enumerate(languages)},
             "ca": {c: i for i, c in enumerate(CATEGORIES)}}
    by_pair: dict[tuple[str, int], list] = defaultdict(list)
    for r in rows:
        by_pair[(r.system, r.query_rowid)].append(r)
    queries: dict[int, dict] = {}
    items = []
    for (system, q), pair_rows in by_pair.items():
        detail = item_detail(store, run, system, q)
        if q not in queries:
            queries[q] = {"id": detail.query_id, "text": detail.query,
                          "source": detail.source or "?", "answers": detail.answers,
                          "pool": [[c.chunk_rowid, c.chunk_id, c.title, int(c.is_oracle),
                                    int(c.support), c.text] for c in detail.pool]}
        by_setting = {s.setting: s for s in detail.settings}
        for r in pair_rows:
            s = by_setting.get(r.setting)
            items.append({
                "sy": index["sy"][r.system], "se": index["se"][r.setting], "q": q,
                "la": index["la"][r.language or "?"],
                "ca": None if r.category is None else index["ca"][r.category],
                "pa": r.pattern,
                "mx": None if r.mixed_setting is None else
                index["se"].get(r.mixed_setting),
                "em": None if r.em_loose is None else int(round(r.em_loose)),
                "r": r.response, "er": r.error,
                "pr": s.prompt if s else None, "cx": (s.context or []) if s else [],
                "sc": [[x.metric, x.value, x.detail] for x in s.scores] if s else []})
            if s and (s.reasoning or s.reasoning_tokens or s.thinking_cut):
                # a reasoning model's thinking (only then: other pages stay as they were)
                items[-1].update({"rs": s.reasoning, "rt": s.reasoning_tokens,
                                  "tc": int(s.thinking_cut)})
    return {"systems": systems, "settings": settings, "languages": languages,
            "categories": list(CATEGORIES),
            "category_names": [category_label(c).split(":")[0] for c in CATEGORIES],
            "queries": {str(q): v for q, v in queries.items()}, "items": items,
            "shown": len(items)}


def pack(data: Any) -> str:
    """JSON, gzip-compressed, base64: what the page's script unpacks with the browser's own
    ``DecompressionStream`` (prompts repeat the same passages, so this is several times
    smaller than the JSON)."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def unpack(text: str) -> Any:
    """The inverse of :func:`pack` (for tests and readers of a saved page)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))
