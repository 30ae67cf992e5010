"""What the inspector's filters mean, for the SQL that reads them
(:mod:`engine.store.item_queries`): the setting ranks, each system's default mixed-like
setting and the (b, o, m) patterns a category or pattern filter keeps (:func:`items_sql`).
Running the queries and shaping rows stay in :mod:`engine.results.inspector`."""

from __future__ import annotations

from engine.metrics.adaptability import PATTERN_KEYS, category_of
from engine.results.records import LOOSE_METRIC, is_mixed_like, setting_order
from engine.store import Store
from engine.store.item_queries import (MIN_INDEXED_SEARCH, NO_VALUE,  # noqa: F401
                                       SEARCH_FIRST_LIMIT, SORT_KEYS, ItemQuery, fts_phrase,
                                       item_query, search_sql)
from engine.store.items import run_settings


def _default_mixed(settings: set[str]) -> str | None:
    if "mixed" in settings:
        return "mixed"
    mixed_like = sorted((s for s in settings if is_mixed_like(s)), key=setting_order)
    return mixed_like[0] if mixed_like else None


def _patterns_of(category: str) -> list[str]:
    return [p for p in PATTERN_KEYS if category_of(int(p[1]), int(p[3]), int(p[5])) == category]


def wanted_patterns(category: str | None, pattern: str | None) -> list[str] | None:
    """The patterns a ``category`` and/or ``pattern`` filter keeps (None: no such filter)."""
    if pattern is None and category is None:
        return None
    if pattern is not None and category is not None:
        return [pattern] if pattern in _patterns_of(category) else []
    return [pattern] if pattern is not None else _patterns_of(category)


def items_sql(store: Store, run_id: int, system: str | None = None,
              setting: str | None = None, category: str | None = None,
              pattern: str | None = None, language: str | None = None,
              source: str | None = None, metric: str | None = None,
              min_value: float | None = None, max_value: float | None = None,
              mixed_setting: str | None = None, search: str | None = None,
              search_first: bool | None = None, cut: str | None = None) -> ItemQuery:
    """The inspector's filters as one indexed query over the run's items
    (:func:`engine.store.item_queries.item_query`): settings ranked in
    :func:`~engine.results.records.setting_order`, each item's mixed-like setting for its
    EM_loose pattern (``mixed_setting``, else its own when mixed-like, else its system's
    ``mixed``, else its first mixed-like one), a category as the patterns it holds."""
    by_system = run_settings(store, run_id)
    settings = {s for names in by_system.values() for s in names}
    ranks = {s: i for i, s in enumerate(sorted(settings, key=setting_order))}
    defaults = {name: _default_mixed(set(names)) for name, names in by_system.items()}
    return item_query(store, run_id, ranks=ranks, default_mixed=defaults,
                      loose_metric=LOOSE_METRIC,
                      patterns=wanted_patterns(category, pattern), system=system,
                      setting=setting, language=language, source=source, metric=metric,
                      min_value=min_value, max_value=max_value, mixed_setting=mixed_setting,
                      search=search, search_first=search_first, cut=cut)
