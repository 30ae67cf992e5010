"""Read stored generations' texts by key (the ``generations`` table, migration m002), and
what a model's stored generations thought (m017)."""

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


def measured_thinking(store: Store, model: str, mode: str | None = None
                      ) -> tuple[int, int, float | None, int]:
    """``(generations, thinking, mean reasoning tokens of those that thought, cut while
    thinking)`` of model ``model``'s stored generations (migration m017's columns); with
    ``mode``, only those generated in that thinking mode (its params JSON: ``auto`` has no
    ``thinking`` key)."""
    where, args = "model_name = ?", [model]
    if mode == "auto":
        where += " AND instr(params, '\"thinking\"') = 0"
    elif mode is not None:
        where += " AND instr(params, ?) > 0"
        args.append(f'"thinking": "{mode}"')
    row = store.query(
        "SELECT COUNT(*), SUM(reasoning_tokens > 0 OR thinking_cut = 1), "
        "AVG(CASE WHEN reasoning_tokens > 0 THEN reasoning_tokens END), SUM(thinking_cut) "
        f"FROM generations WHERE {where}", tuple(args))[0]
    return int(row[0] or 0), int(row[1] or 0), row[2], int(row[3] or 0)
