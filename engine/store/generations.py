"""Read stored generations' texts by key (the ``generations`` table, migration m002)."""

from __future__ import annotations

from typing import Iterable

from engine.store.database import Store


def generation_texts(store: Store, keys: Iterable[str]) -> dict[str, str]:
    """``{key: text}`` of the stored generations among ``keys``."""
    return {r[0]: r[1] for r in store.query_in(
        "SELECT key, text FROM generations WHERE key IN ({marks})", sorted(set(keys)))}


def generation_text(store: Store, key: str) -> str | None:
    """The stored generation's text (a run's cache lookup, one item at a time), or None."""
    rows = store.query("SELECT text FROM generations WHERE key = ?", (key,))
    return rows[0][0] if rows else None
