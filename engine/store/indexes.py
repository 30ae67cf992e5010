"""Dense retrieval's tables: ``embedders``, ``embeddings`` (one vector per embedder, role and
text hash, little-endian float32), ``retrieval_indexes`` (a finished indexing), ``retrievals``
(a retriever's ranked list per query, JSON ``[[chunk rowid, score], ...]``), and the pool's
gold rows the rankings are scored against. :mod:`engine.retrieval` embeds, searches and scores;
this module only reads and writes."""

from __future__ import annotations

import sqlite3
from typing import Iterable, Sequence

import numpy as np

from engine.store.database import IN_BATCH, Store, batched, marks

VECTOR_DTYPE = "<f4"
"""How a vector is stored: its float32 values, little-endian, one after another."""


# --------------------------------------------------------------------------- embedders, vectors

def save_embedder(store: Store, key: str, name: str, identity: str, dim: int,
                  max_seq_length: int | None, normalized: bool, created_at: str) -> None:
    """Record an embedder (``identity`` as JSON text) unless its key is there already."""
    with store.write() as db:
        db.conn.execute(
            "INSERT OR IGNORE INTO embedders (key, name, identity, dim, max_seq_length, "
            "normalized, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, name, identity, int(dim), max_seq_length, int(bool(normalized)), created_at))


def store_vectors(store: Store, key: str, role: str, hashes: Sequence[str],
                  vectors: np.ndarray, tokens: Sequence[int] | None) -> None:
    """Store one vector per text hash (and its token count, when known) in one transaction;
    a vector already stored is kept."""
    blobs = np.ascontiguousarray(vectors, dtype=VECTOR_DTYPE)
    tokens = tokens if tokens is not None else [None] * len(hashes)
    with store.write() as db:
        db.conn.executemany(
            "INSERT OR IGNORE INTO embeddings (embedder_key, role, content_hash, vector, tokens) "
            "VALUES (?, ?, ?, ?, ?)",
            ((key, role, h, blobs[i].tobytes(), None if t is None else int(t))
             for i, (h, t) in enumerate(zip(hashes, tokens))))


def stored_vectors(store: Store, key: str, role: str, hashes: Iterable[str],
                   dim: int) -> dict[str, np.ndarray]:
    """``{text hash: vector}`` of the stored vectors among ``hashes``; a stored vector that has
    not ``dim`` values is a ValueError."""
    out = {}
    for part in batched(hashes, IN_BATCH):
        for h, blob in store.conn.execute(
                f"SELECT content_hash, vector FROM embeddings WHERE embedder_key = ? AND role = ? "
                f"AND content_hash IN ({marks(len(part))})", (key, role, *part)):
            out[h] = _vector(blob, dim)
    return out


def _vector(blob: bytes, dim: int) -> np.ndarray:
    if len(blob) != 4 * dim:
        raise ValueError(f"a stored vector has {len(blob) // 4} values, the embedder has {dim}")
    return np.frombuffer(blob, dtype=VECTOR_DTYPE)


def chunk_vectors(store: Store, dataset_ids: Sequence[int], key: str, role: str,
                  dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(chunk rowids, their stored vectors as an (n, dim) float32 matrix) of these datasets'
    chunks that have a vector, in rowid order."""
    rows = store.conn.execute(
        f"SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.embedder_key = ? "
        f"AND e.role = ? AND e.content_hash = c.content_hash "
        f"WHERE c.dataset_id IN ({marks(len(dataset_ids))}) ORDER BY c.id",
        (key, role, *dataset_ids)).fetchall()
    blob = b"".join(r[1] for r in rows)
    if len(blob) != 4 * dim * len(rows):
        raise ValueError(f"stored vectors do not all have the embedder's {dim} values")
    matrix = np.frombuffer(blob, dtype=VECTOR_DTYPE).reshape(len(rows), dim).astype(np.float32)
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)), matrix


def unembedded_chunks(store: Store, dataset_ids: Sequence[int], key: str,
                      role: str) -> list[tuple[str, str]]:
    """(text hash, text) of these datasets' chunks without a stored vector, in rowid order
    (a text shared by several chunks comes once per chunk)."""
    return store.conn.execute(
        f"SELECT c.content_hash, c.text FROM chunks c "
        f"WHERE c.dataset_id IN ({marks(len(dataset_ids))}) "
        "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.embedder_key = ? AND e.role = ? "
        "AND e.content_hash = c.content_hash) ORDER BY c.id",
        (*dataset_ids, key, role)).fetchall()


def over_length_count(store: Store, dataset_ids: Sequence[int], key: str, role: str,
                      limit: int) -> int:
    """These datasets' chunks whose stored token count is over ``limit``."""
    return store.query(
        f"SELECT COUNT(*) FROM chunks c JOIN embeddings e ON e.embedder_key = ? AND e.role = ? "
        f"AND e.content_hash = c.content_hash WHERE c.dataset_id IN ({marks(len(dataset_ids))}) "
        "AND e.tokens > ?", (key, role, *dataset_ids, limit))[0][0]


def save_index(store: Store, dataset_id: int, embedder_key: str, chunks: int, embedded: int,
               over_length: int, seconds: float, created_at: str) -> None:
    """The record of a complete indexing (``retrieval_indexes``)."""
    with store.write() as db:
        db.conn.execute(
            "INSERT INTO retrieval_indexes (dataset_id, embedder_key, chunks, embedded, "
            "over_length, seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (dataset_id, embedder_key, chunks, embedded, over_length, seconds, created_at))


# --------------------------------------------------------------------------- rankings

def save_rankings(store: Store, retriever: str, rows: Iterable[tuple[int, str]]) -> None:
    """(query rowid, ranked list as JSON) rows of ``retriever``, replacing any stored, in one
    transaction."""
    with store.write() as db:
        db.conn.executemany(
            "INSERT OR REPLACE INTO retrievals (retriever, query_rowid, ranked) "
            "VALUES (?, ?, ?)", ((retriever, q, ranked) for q, ranked in rows))


def rankings_of_queries(store: Store, retriever: str,
                        query_rowids: Iterable[int]) -> Iterable[sqlite3.Row]:
    """(``query_rowid``, ``ranked`` JSON) of ``retriever``'s stored lists for these queries."""
    return store.query_in(
        "SELECT query_rowid, ranked FROM retrievals WHERE retriever = ? "
        "AND query_rowid IN ({marks})", query_rowids, (retriever,))


def rankings_of_dataset(store: Store, dataset_id: int, retriever: str) -> list[sqlite3.Row]:
    """(``query_rowid``, ``ranked`` JSON) of ``retriever``'s stored lists for the dataset's
    queries, in the order the store returns them."""
    return store.query(
        "SELECT r.query_rowid, r.ranked FROM retrievals r JOIN queries q ON q.id = r.query_rowid "
        "WHERE q.dataset_id = ? AND r.retriever = ?", (dataset_id, retriever))


def retrievers_of_dataset(store: Store, dataset_id: int) -> list[str]:
    """Labels of the retrievers with lists stored for the dataset's queries, in order."""
    return [r[0] for r in store.query(
        "SELECT DISTINCT r.retriever FROM retrievals r JOIN queries q ON q.id = r.query_rowid "
        "WHERE q.dataset_id = ? ORDER BY r.retriever", (dataset_id,))]


# --------------------------------------------------------------------------- gold

def supporting_pool_rows(store: Store, dataset_id: int, *,
                         file_labels_only: bool) -> list[sqlite3.Row]:
    """(query rowid, chunk rowid) of the dataset's pool rows with ``support = 1``; with
    ``file_labels_only``, only those the file marked (``support_source = 'label'``)."""
    only = " AND p.support_source = 'label'" if file_labels_only else ""
    return store.query("SELECT p.query_rowid, p.chunk_rowid FROM pool p JOIN queries q "
                       "ON q.id = p.query_rowid WHERE q.dataset_id = ? AND p.support = 1"
                       + only, (dataset_id,))


def answer_match_count(store: Store, dataset_id: int) -> int:
    """The dataset's pool rows that support only by answer match (``support = 1`` not from the
    file's labels)."""
    return store.query("SELECT COUNT(*) FROM pool p JOIN queries q ON q.id = p.query_rowid "
                       "WHERE q.dataset_id = ? AND p.support = 1 "
                       "AND p.support_source != 'label'", (dataset_id,))[0][0]
