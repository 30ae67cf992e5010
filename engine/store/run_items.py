"""A run's items: the write side (one item, its generation and its scores, or its error), what
a resume reads back (finished items, labels, a stored score), and what items are
made of (queries, their pools, chunk texts, a dataset's queries). What is written and why is
:mod:`engine.runs.rows`'s; the per-item write is the run's hot path: it adds no query."""

from __future__ import annotations

import sqlite3
from typing import Iterable, Sequence

from engine.store.database import Store

ItemKey = tuple[str, str, int]        # (system, setting, query rowid)


# --------------------------------------------------------------------------- writing

def save_item(db, run_id: int, key: ItemKey, gen_key: str, context: str, truncated: bool,
              generation: tuple | None, scores: list[tuple] | None, at: str) -> None:
    """Inside the caller's write transaction: the generation row (``generation``: model key,
    model name, prompt, params, text, prompt tokens, completion tokens, prompt tokens
    evaluated, seconds, finish reason, device, reasoning, reasoning tokens, cut while thinking;
    stored once per key), the run item (replacing an earlier row, an error too), its scores
    replaced as a whole (``scores``: metric, value, detail), the run's update time."""
    system, setting, query = key
    conn = db.conn
    if generation is not None:
        conn.execute(
            "INSERT INTO generations (key, model_key, model_name, prompt, "
            "params, text, prompt_tokens, completion_tokens, prompt_tokens_evaluated, "
            "seconds, finish_reason, device, reasoning, reasoning_tokens, thinking_cut, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            (gen_key, *generation, at))
    conn.execute(
        "INSERT OR REPLACE INTO run_items (run_id, system, setting, query_rowid, "
        "generation_key, context, truncated, error) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
        (run_id, system, setting, query, gen_key, context, int(truncated)))
    if scores is not None:
        conn.execute("DELETE FROM scores WHERE generation_key = ? AND query_rowid = ?",
                     (gen_key, query))
        conn.executemany(
            "INSERT INTO scores (generation_key, query_rowid, metric, value, detail) "
            "VALUES (?, ?, ?, ?, ?)", [(gen_key, query, *s) for s in scores])
    conn.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (at, run_id))


def save_error(db, run_id: int, key: ItemKey, context: str | None, error: str,
               at: str) -> None:
    """Inside the caller's write transaction: the item's error row (replacing an earlier
    row) and the run's update time."""
    system, setting, query = key
    db.conn.execute(
        "INSERT OR REPLACE INTO run_items (run_id, system, setting, query_rowid, "
        "generation_key, context, truncated, error) VALUES (?, ?, ?, ?, NULL, ?, 0, ?)",
        (run_id, system, setting, query, context, error))
    db.conn.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (at, run_id))


# --------------------------------------------------------------------------- reading back

def items_with_mark(store: Store, run_id: int, mark: str) -> list[sqlite3.Row]:
    """``system, setting, query rowid, generation key, detail of its score row
    ``mark`` (None without one)`` of each of the run's items."""
    return store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, ri.generation_key, s.detail "
        "FROM run_items ri LEFT JOIN scores s ON s.generation_key = ri.generation_key "
        "AND s.query_rowid = ri.query_rowid AND s.metric = ? WHERE ri.run_id = ?",
        (mark, run_id))


def item_values(store: Store, run_id: int, metric: str) -> list[sqlite3.Row]:
    """``system, setting, query rowid, value`` of the run's items scored on ``metric``."""
    return store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, s.value FROM run_items ri "
        "JOIN scores s ON s.generation_key = ri.generation_key AND s.query_rowid = "
        "ri.query_rowid WHERE ri.run_id = ? AND s.metric = ? AND s.value IS NOT NULL",
        (run_id, metric))


def score_row(store: Store, gen_key: str, query: int, metric: str) -> sqlite3.Row | None:
    """``value, detail`` of one stored score, or None."""
    rows = store.query("SELECT value, detail FROM scores WHERE generation_key = ? "
                       "AND query_rowid = ? AND metric = ?", (gen_key, query, metric))
    return rows[0] if rows else None


# --------------------------------------------------------------------------- what items use

def dataset_queries(store: Store, dataset_id: int) -> list[sqlite3.Row]:
    """``id, source, language`` of the dataset's queries, by rowid."""
    return store.query("SELECT id, source, language FROM queries WHERE dataset_id = ? "
                       "ORDER BY id", (dataset_id,))


def pool_rows(store: Store, rowids: Sequence[int]) -> Iterable[sqlite3.Row]:
    """``query rowid, chunk rowid, position, is_oracle`` of these queries' pools, by query and
    position (unpositioned rows last)."""
    return store.query_in(
        "SELECT query_rowid, chunk_rowid, position, is_oracle FROM pool "
        "WHERE query_rowid IN ({marks}) ORDER BY query_rowid, "
        "position IS NULL, position, chunk_rowid", rowids)


def query_rows(store: Store, rowids: Sequence[int]) -> Iterable[sqlite3.Row]:
    """``id, text, language, answers`` of these queries."""
    return store.query_in("SELECT id, text, language, answers FROM queries "
                          "WHERE id IN ({marks})", rowids)


