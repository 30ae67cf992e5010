"""Stored features (MIRAGE-Bench's heuristic features, :mod:`engine.arena.surrogate.features`): rows of
``scores`` whose metric starts with ``feat:``, keyed by generation and query like every answer
metric; and what computing them reads of a response (its query's facts, the supporting
passages, the passages' texts). Generation texts are read through
:func:`engine.store.generations.generation_texts`."""

from __future__ import annotations

import sqlite3
from typing import Iterable

from engine.store.database import Store


def stored_feature_rows(store: Store, run_id: int) -> list[sqlite3.Row]:
    """``(generation_key, query_rowid, metric)`` of every feature stored for the run's
    responses (distinct)."""
    return store.query(
        "SELECT DISTINCT s.generation_key, s.query_rowid, s.metric FROM run_items ri "
        "JOIN scores s ON s.generation_key = ri.generation_key AND "
        "s.query_rowid = ri.query_rowid WHERE ri.run_id = ? AND s.metric LIKE 'feat:%'",
        (run_id,))


def save_features(store: Store, rows: Iterable[tuple]) -> None:
    """``(generation_key, query_rowid, metric, value, detail)`` rows of one response, each
    replacing a stored one, in one transaction."""
    with store.write() as db:
        db.conn.executemany(
            "INSERT OR REPLACE INTO scores (generation_key, query_rowid, metric, value, "
            "detail) VALUES (?, ?, ?, ?, ?)", list(rows))


def response_queries(store: Store, rowids: Iterable[int]) -> dict[int, sqlite3.Row]:
    """``{rowid: (id, text, language, answers, reference_answer)}`` of the queries."""
    return {r["id"]: r for r in store.query_in(
        "SELECT id, text, language, answers, reference_answer FROM queries "
        "WHERE id IN ({marks})", rowids)}


def supporting_chunk_ids(store: Store, rowids: Iterable[int]) -> dict[int, set[int]]:
    """``{query rowid: chunk rowids}`` of each query's supporting pool chunks
    (``support = 1``)."""
    out: dict[int, set[int]] = {}
    for r in store.query_in("SELECT query_rowid, chunk_rowid FROM pool WHERE support = 1 AND "
                            "query_rowid IN ({marks})", rowids):
        out.setdefault(r[0], set()).add(r[1])
    return out


