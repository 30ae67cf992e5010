"""Reading datasets back: summaries with counts, queries, and a query with its pool."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from engine.store import Store
from engine.suggest import did_you_mean


class DatasetNotFound(LookupError):
    pass


@dataclass
class DatasetSummary:
    id: int
    name: str
    version: int
    kind: str
    format: str
    created_at: str
    queries: int
    chunks: int
    languages: dict[str, int] = field(default_factory=dict)   # queries (or chunks) per language
    sources: dict[str, int] = field(default_factory=dict)     # queries per source
    collections: list[str] = field(default_factory=list)      # attached distractor collections
    description: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def as_json(self) -> dict:
        return {"name": self.name, "version": self.version, "kind": self.kind,
                "format": self.format, "queries": self.queries, "chunks": self.chunks,
                "languages": self.languages, "sources": self.sources,
                "collections": self.collections, "created_at": self.created_at}


@dataclass
class PoolEntry:
    position: int | None
    chunk_id: str
    title: str | None
    text: str
    language: str | None
    support: int
    is_oracle: bool
    support_source: str


@dataclass
class QueryDetail:
    dataset: str
    query_id: str
    text: str
    language: str | None
    source: str | None
    answers: list[str]
    reference_answer: str | None
    reference_citations: object
    metadata: dict
    pool: list[PoolEntry]


def _split_ref(ref: str) -> tuple[str, int | None]:
    name, _, version = ref.rpartition("@")
    if name and version.isdigit():
        return name, int(version)
    return ref, None


def resolve(store: Store, ref: str) -> int:
    """Dataset id for ``name`` (its newest version) or ``name@version``."""
    name, version = _split_ref(ref)
    if version is None:
        row = store.query("SELECT id FROM datasets WHERE name = ? ORDER BY version DESC LIMIT 1",
                          (name,))
    else:
        row = store.query("SELECT id FROM datasets WHERE name = ? AND version = ?",
                          (name, version))
    if not row:
        known = [r[0] for r in store.query("SELECT DISTINCT name FROM datasets ORDER BY name")]
        hint = f" (known: {', '.join(known)})" if known else " (the store has no datasets yet)"
        raise DatasetNotFound(f"no dataset named {ref!r}{did_you_mean(name, known) or hint}")
    return row[0]["id"]


_N_QUERIES = ("CASE WHEN d.kind = 'labels' "
              "THEN (SELECT COUNT(*) FROM label_pairs p WHERE p.dataset_id = d.id) "
              "ELSE (SELECT COUNT(*) FROM queries q WHERE q.dataset_id = d.id) END")
"""A dataset's items: its queries, or for human labels (kind 'labels') its answer pairs."""


def list_datasets(store: Store, latest_only: bool = False) -> list[DatasetSummary]:
    rows = store.query(
        f"SELECT d.*, {_N_QUERIES} AS n_queries, "
        "(SELECT COUNT(*) FROM chunks c WHERE c.dataset_id = d.id) AS n_chunks "
        "FROM datasets d ORDER BY d.name, d.version")
    if latest_only:
        newest = {r["name"]: r["version"] for r in rows}
        rows = [r for r in rows if r["version"] == newest[r["name"]]]
    return [_summary(store, r) for r in rows]


def datasets_fingerprint(store: Store) -> tuple:
    """What changes whenever a dataset is imported, replaced or removed: one aggregate over
    the dataset rows, for screens that poll for changes."""
    return tuple(store.query("SELECT COUNT(*), MAX(id), TOTAL(id), MAX(created_at) "
                             "FROM datasets")[0])


def get_dataset(store: Store, ref: str) -> DatasetSummary:
    dataset_id = resolve(store, ref)
    row = store.query(
        f"SELECT d.*, {_N_QUERIES} AS n_queries, "
        "(SELECT COUNT(*) FROM chunks c WHERE c.dataset_id = d.id) AS n_chunks "
        "FROM datasets d WHERE d.id = ?", (dataset_id,))[0]
    return _summary(store, row)


def _summary(store: Store, r) -> DatasetSummary:
    if r["kind"] == "labels":           # answer pairs: no queries, chunks, languages or sources
        return DatasetSummary(r["id"], r["name"], r["version"], r["kind"], r["format"],
                              r["created_at"], r["n_queries"], r["n_chunks"], {}, {}, [],
                              r["description"])
    table = "queries" if r["n_queries"] else "chunks"
    languages = {(row[0] or "?"): row[1] for row in store.query(
        f"SELECT language, COUNT(*) FROM {table} WHERE dataset_id = ? "
        "GROUP BY language ORDER BY COUNT(*) DESC, language", (r["id"],))}
    sources = {}
    if r["n_queries"]:
        sources = {(row[0] or "?"): row[1] for row in store.query(
            "SELECT source, COUNT(*) FROM queries WHERE dataset_id = ? GROUP BY source "
            "ORDER BY COUNT(*) DESC, source LIMIT 50", (r["id"],))}
    collections = [f"{row[0]}@{row[1]}" for row in store.query(
        "SELECT d.name, d.version FROM dataset_collections dc JOIN datasets d "
        "ON d.id = dc.collection_id WHERE dc.dataset_id = ? ORDER BY d.name", (r["id"],))]
    return DatasetSummary(r["id"], r["name"], r["version"], r["kind"], r["format"],
                          r["created_at"], r["n_queries"], r["n_chunks"], languages, sources,
                          collections, r["description"])


def list_queries(store: Store, ref: str, *, language: str | None = None,
                 source: str | None = None, search: str | None = None,
                 limit: int = 100, offset: int = 0) -> list[dict]:
    """A page of a dataset's queries (id, text, language, source, answers)."""
    dataset_id = resolve(store, ref)
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
    return [{"query_id": r["query_id"], "text": r["text"], "language": r["language"],
             "source": r["source"], "answers": json.loads(r["answers"])}
            for r in store.query(sql, tuple(params))]


def get_query(store: Store, ref: str, query_id: str) -> QueryDetail:
    dataset_id = resolve(store, ref)
    rows = store.query("SELECT * FROM queries WHERE dataset_id = ? AND query_id = ?",
                       (dataset_id, query_id))
    if not rows:
        raise LookupError(f"dataset {ref!r} has no query {query_id!r}")
    q = rows[0]
    pool = [PoolEntry(r["position"], r["chunk_id"], r["title"], r["text"], r["language"],
                      r["support"], bool(r["is_oracle"]), r["support_source"])
            for r in store.query(
                "SELECT p.position, p.support, p.is_oracle, p.support_source, c.chunk_id, "
                "c.title, c.text, c.language FROM pool p JOIN chunks c ON c.id = p.chunk_rowid "
                "WHERE p.query_rowid = ? ORDER BY p.position IS NULL, p.position, c.chunk_id",
                (q["id"],))]
    return QueryDetail(ref, q["query_id"], q["text"], q["language"], q["source"],
                       json.loads(q["answers"]), q["reference_answer"],
                       json.loads(q["reference_citations"]) if q["reference_citations"] else None,
                       json.loads(q["metadata"]) if q["metadata"] else {}, pool)


def attach_collection(store: Store, dataset_ref: str, collection_ref: str) -> None:
    """Add a distractor collection's chunks to a dataset's retrieval pool."""
    dataset_id = resolve(store, dataset_ref)
    collection_id = resolve(store, collection_ref)
    if dataset_id == collection_id:
        raise ValueError("a dataset cannot be attached to itself")
    with store.write() as db:
        db.conn.execute("INSERT OR IGNORE INTO dataset_collections VALUES (?, ?)",
                        (dataset_id, collection_id))


def retrieval_chunk_count(store: Store, ref: str) -> int:
    """Chunks a retriever searches for this dataset: its own plus attached collections'."""
    dataset_id = resolve(store, ref)
    return store.query(
        "SELECT COUNT(*) FROM chunks WHERE dataset_id = ? OR dataset_id IN "
        "(SELECT collection_id FROM dataset_collections WHERE dataset_id = ?)",
        (dataset_id, dataset_id))[0][0]
