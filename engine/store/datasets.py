"""The dataset tables (migration m001): ``datasets``, ``chunks``, ``queries``, ``pool``,
``dataset_collections`` and ``imports``, read and written here. :mod:`engine.datasets` turns
the rows into summaries and query details; :mod:`engine.datasets.importing` writes a parsed
dataset through the ``insert_*`` functions, all inside one ``store.write()`` transaction (they
take its ``db``)."""

from __future__ import annotations

import sqlite3
from typing import Iterable, Sequence

import sqlite_utils

from engine.store.database import Store, marks


# --------------------------------------------------------------------------- finding a dataset

def dataset_id_by_name(store: Store, name: str, version: int | None = None) -> int | None:
    """The id of dataset ``name`` at ``version`` (None: its newest version), or None."""
    if version is None:
        rows = store.query("SELECT id FROM datasets WHERE name = ? ORDER BY version DESC LIMIT 1",
                           (name,))
    else:
        rows = store.query("SELECT id FROM datasets WHERE name = ? AND version = ?",
                           (name, version))
    return rows[0]["id"] if rows else None


def dataset_names(store: Store) -> list[str]:
    """Every dataset name, once, in order."""
    return [r[0] for r in store.query("SELECT DISTINCT name FROM datasets ORDER BY name")]


def has_dataset_named(store: Store, name: str) -> bool:
    return bool(store.query("SELECT 1 FROM datasets WHERE name = ?", (name,)))


def dataset_identity(store: Store, dataset_id: int) -> sqlite3.Row:
    """``name``, ``version`` and ``kind`` of a dataset that exists."""
    return store.query("SELECT name, version, kind FROM datasets WHERE id = ?",
                       (dataset_id,))[0]


def dataset_by_content(store: Store, content_hash: str, format: str) -> sqlite3.Row | None:
    """The newest dataset (``id``, ``name``, ``version``) imported from this content in this
    format, or None."""
    rows = store.query(
        "SELECT id, name, version FROM datasets WHERE content_hash = ? AND format = ? "
        "ORDER BY id DESC LIMIT 1", (content_hash, format))
    return rows[0] if rows else None


def datasets_fingerprint(store: Store) -> tuple:
    """What changes whenever a dataset is imported, replaced or removed: one aggregate over
    the dataset rows, for screens that poll for changes."""
    return tuple(store.query("SELECT COUNT(*), MAX(id), TOTAL(id), MAX(created_at) "
                             "FROM datasets")[0])


# --------------------------------------------------------------------------- summaries

_SUMMARY = ("SELECT d.*, "
            "CASE WHEN d.kind = 'labels' "
            "THEN (SELECT COUNT(*) FROM label_pairs p WHERE p.dataset_id = d.id) "
            "ELSE (SELECT COUNT(*) FROM queries q WHERE q.dataset_id = d.id) END AS n_queries, "
            "(SELECT COUNT(*) FROM chunks c WHERE c.dataset_id = d.id) AS n_chunks "
            "FROM datasets d")
"""A dataset's row with ``n_queries`` (its queries, or for human labels, kind 'labels', its
answer pairs) and ``n_chunks``."""


def dataset_rows(store: Store) -> list[sqlite3.Row]:
    """Every dataset's row with ``n_queries`` and ``n_chunks``, by name and version."""
    return store.query(f"{_SUMMARY} ORDER BY d.name, d.version")


def dataset_row(store: Store, dataset_id: int) -> sqlite3.Row:
    """One dataset's row with ``n_queries`` and ``n_chunks``."""
    return store.query(f"{_SUMMARY} WHERE d.id = ?", (dataset_id,))[0]


def language_counts(store: Store, dataset_id: int, of: str = "queries") -> list[sqlite3.Row]:
    """(language, count) of the dataset's ``of`` (``queries`` or ``chunks``), most first."""
    if of not in ("queries", "chunks"):
        raise ValueError(f"of must be 'queries' or 'chunks', not {of!r}")
    return store.query(f"SELECT language, COUNT(*) FROM {of} WHERE dataset_id = ? "
                       "GROUP BY language ORDER BY COUNT(*) DESC, language", (dataset_id,))


def source_counts(store: Store, dataset_id: int, limit: int = 50) -> list[sqlite3.Row]:
    """(source, count) of the dataset's queries, most first, at most ``limit``."""
    return store.query("SELECT source, COUNT(*) FROM queries WHERE dataset_id = ? "
                       "GROUP BY source ORDER BY COUNT(*) DESC, source LIMIT ?",
                       (dataset_id, limit))


def collection_names(store: Store, dataset_id: int) -> list[sqlite3.Row]:
    """(name, version) of the collections attached to the dataset, by name."""
    return store.query(
        "SELECT d.name, d.version FROM dataset_collections dc JOIN datasets d "
        "ON d.id = dc.collection_id WHERE dc.dataset_id = ? ORDER BY d.name", (dataset_id,))


def collection_ids(store: Store, dataset_id: int) -> list[int]:
    """The ids of the collections attached to the dataset, in id order."""
    return [r[0] for r in store.query(
        "SELECT collection_id FROM dataset_collections WHERE dataset_id = ? ORDER BY collection_id",
        (dataset_id,))]


def content_hashes(store: Store, dataset_ids: Sequence[int]) -> list[str]:
    """The content hashes of these datasets (in the store's order)."""
    if not dataset_ids:
        return []
    return [r[0] for r in store.query(
        f"SELECT content_hash FROM datasets WHERE id IN ({marks(len(dataset_ids))})",
        tuple(dataset_ids))]


def chunk_count(store: Store, dataset_ids: Sequence[int]) -> int:
    """How many chunks these datasets hold together."""
    return store.query(
        f"SELECT COUNT(*) FROM chunks WHERE dataset_id IN ({marks(len(dataset_ids))})",
        tuple(dataset_ids))[0][0]


def chunk_text_counts(store: Store, dataset_ids: Sequence[int]) -> tuple[int, int]:
    """(chunks, distinct chunk texts) of these datasets together."""
    chunks, texts = store.query(
        f"SELECT COUNT(*), COUNT(DISTINCT content_hash) FROM chunks "
        f"WHERE dataset_id IN ({marks(len(dataset_ids))})", tuple(dataset_ids))[0]
    return chunks, texts


def attach_collection(store: Store, dataset_id: int, collection_id: int) -> None:
    """Record ``collection_id`` as attached to ``dataset_id`` (once)."""
    with store.write() as db:
        db.conn.execute("INSERT OR IGNORE INTO dataset_collections VALUES (?, ?)",
                        (dataset_id, collection_id))


def dataset_counts(store: Store, dataset_id: int) -> dict[str, int]:
    """``queries``, ``chunks``, ``pool_entries`` and ``pairs`` (answer pairs) of a dataset."""
    return dict(store.query(
        "SELECT (SELECT COUNT(*) FROM queries WHERE dataset_id = :d) AS queries, "
        "(SELECT COUNT(*) FROM chunks WHERE dataset_id = :d) AS chunks, "
        "(SELECT COUNT(*) FROM pool JOIN queries q ON q.id = pool.query_rowid "
        " WHERE q.dataset_id = :d) AS pool_entries, "
        "(SELECT COUNT(*) FROM label_pairs WHERE dataset_id = :d) AS pairs",
        {"d": dataset_id})[0])


# --------------------------------------------------------------------------- queries and chunks

def query_page(store: Store, dataset_id: int, *, language: str | None = None,
               source: str | None = None, search: str | None = None, limit: int = 100,
               offset: int = 0) -> list[sqlite3.Row]:
    """A page of the dataset's queries (``query_id``, ``text``, ``language``, ``source``,
    ``answers`` as stored), in id order; ``search`` matches the text or the query id."""
    sql = ("SELECT query_id, text, language, source, answers FROM queries "
           "WHERE dataset_id = ?")
    params: list = [dataset_id]
    if language:
        sql += " AND language = ?"
        params.append(language)
    if source:
        sql += " AND source = ?"
        params.append(source)
    if search:
        sql += " AND (text LIKE ? OR query_id LIKE ?)"
        params += [f"%{search}%", f"%{search}%"]
    sql += " ORDER BY id LIMIT ? OFFSET ?"
    params += [limit, offset]
    return store.query(sql, tuple(params))


def query_row(store: Store, dataset_id: int, query_id: str | int) -> sqlite3.Row | None:
    """The dataset's query by its id (a str) or its rowid (an int), or None."""
    column = "id" if isinstance(query_id, int) else "query_id"
    rows = store.query(f"SELECT * FROM queries WHERE {column} = ? AND dataset_id = ?",
                       (query_id, dataset_id))
    return rows[0] if rows else None


def pool_rows(store: Store, query_rowid: int) -> list[sqlite3.Row]:
    """A query's pool entries with their chunks, by position (unpositioned last)."""
    return store.query(
        "SELECT p.chunk_rowid, p.position, p.support, p.is_oracle, p.support_source, "
        "c.chunk_id, c.title, c.text, c.language FROM pool p "
        "JOIN chunks c ON c.id = p.chunk_rowid "
        "WHERE p.query_rowid = ? ORDER BY p.position IS NULL, p.position, c.chunk_id",
        (query_rowid,))


def query_texts(store: Store, dataset_id: int) -> dict[int, str]:
    """``{query rowid: text}`` of the dataset's queries, in rowid order."""
    return dict(store.query("SELECT id, text FROM queries WHERE dataset_id = ? ORDER BY id",
                            (dataset_id,)))


def query_facets(store: Store, dataset_id: int) -> list[sqlite3.Row]:
    """(``id``, ``language``, ``source``) of the dataset's queries, in rowid order."""
    return store.query("SELECT id, language, source FROM queries WHERE dataset_id = ? "
                       "ORDER BY id", (dataset_id,))


def chunk_texts(store: Store, chunk_rowids: Iterable[int]) -> dict[int, str]:
    """``{chunk rowid: text}`` of these chunks (any number of them)."""
    return {r[0]: r[1] for r in store.query_in(
        "SELECT id, text FROM chunks WHERE id IN ({marks})", sorted(set(chunk_rowids)))}


# --------------------------------------------------------------------------- an import's writes
# Each takes the ``db`` of the import's one ``store.write()`` transaction; rows are tuples in
# the columns' order, and may be generators (one executemany each, however many rows).

def next_version(db: sqlite_utils.Database, name: str) -> int:
    """The version a new dataset named ``name`` gets: one past the newest."""
    return db.conn.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM datasets WHERE name = ?",
                           (name,)).fetchone()[0]


def insert_dataset(db: sqlite_utils.Database, name: str, version: int, kind: str, format: str,
                   content_hash: str, created_at: str, description: str | None) -> int:
    """A new ``datasets`` row; its id."""
    return db.conn.execute(
        "INSERT INTO datasets (name, version, kind, format, content_hash, created_at, "
        "description) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (name, version, kind, format, content_hash, created_at, description)).lastrowid


def insert_chunks(db: sqlite_utils.Database, rows: Iterable[tuple]) -> None:
    """Rows of (dataset_id, chunk_id, title, text, language, content_hash, metadata)."""
    db.conn.executemany(
        "INSERT INTO chunks (dataset_id, chunk_id, title, text, language, content_hash, "
        "metadata) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def insert_queries(db: sqlite_utils.Database, rows: Iterable[tuple]) -> None:
    """Rows of (dataset_id, query_id, text, language, source, answers, reference_answer,
    reference_citations, metadata)."""
    db.conn.executemany(
        "INSERT INTO queries (dataset_id, query_id, text, language, source, answers, "
        "reference_answer, reference_citations, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows)


def chunk_rowids(db: sqlite_utils.Database, dataset_id: int) -> dict[str, int]:
    """``{chunk_id: rowid}`` of the dataset's chunks."""
    return dict(db.conn.execute("SELECT chunk_id, id FROM chunks WHERE dataset_id = ?",
                                (dataset_id,)).fetchall())


def query_rowids(db: sqlite_utils.Database, dataset_id: int) -> dict[str, int]:
    """``{query_id: rowid}`` of the dataset's queries."""
    return dict(db.conn.execute("SELECT query_id, id FROM queries WHERE dataset_id = ?",
                                (dataset_id,)).fetchall())


def insert_pool(db: sqlite_utils.Database, rows: Iterable[tuple]) -> None:
    """Rows of (query_rowid, chunk_rowid, position, support, is_oracle, support_source)."""
    db.conn.executemany(
        "INSERT INTO pool (query_rowid, chunk_rowid, position, support, is_oracle, "
        "support_source) VALUES (?, ?, ?, ?, ?, ?)", rows)


def insert_import(db: sqlite_utils.Database, dataset_id: int, path: str, format: str,
                  content_hash: str, nbytes: int, counts: str, warnings: str, outcome: str,
                  seconds: float, imported_at: str) -> None:
    """The ``imports`` record of one import (``counts`` and ``warnings`` as JSON text)."""
    db.conn.execute(
        "INSERT INTO imports (dataset_id, path, format, content_hash, bytes, counts, "
        "warnings, outcome, seconds, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (dataset_id, path, format, content_hash, nbytes, counts, warnings, outcome, seconds,
         imported_at))
