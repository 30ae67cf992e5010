"""Reading datasets back: summaries with counts, queries, and a query with its pool."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from engine.store import Store
from engine.store import datasets as stored
from engine.store.datasets import datasets_fingerprint  # noqa: F401 (the Datasets screen's)
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
    dataset_id = stored.dataset_id_by_name(store, name, version)
    if dataset_id is None:
        known = stored.dataset_names(store)
        hint = f" (known: {', '.join(known)})" if known else " (the store has no datasets yet)"
        raise DatasetNotFound(f"no dataset named {ref!r}{did_you_mean(name, known) or hint}")
    return dataset_id


def resolved_ref(store: Store, ref: str) -> str:
    """``name@version`` of the dataset ``ref`` names (:func:`resolve`): one spelling per
    dataset, what a claim on work over it is keyed on (``people`` and ``people@1`` are one)."""
    row = stored.dataset_identity(store, resolve(store, ref))
    return f"{row['name']}@{row['version']}"


def list_datasets(store: Store, latest_only: bool = False) -> list[DatasetSummary]:
    rows = stored.dataset_rows(store)
    if latest_only:
        newest = {r["name"]: r["version"] for r in rows}
        rows = [r for r in rows if r["version"] == newest[r["name"]]]
    return [_summary(store, r) for r in rows]


def get_dataset(store: Store, ref: str) -> DatasetSummary:
    return _summary(store, stored.dataset_row(store, resolve(store, ref)))


def _summary(store: Store, r) -> DatasetSummary:
    if r["kind"] == "labels":           # answer pairs: no queries, chunks, languages or sources
        return DatasetSummary(r["id"], r["name"], r["version"], r["kind"], r["format"],
                              r["created_at"], r["n_queries"], r["n_chunks"], {}, {}, [],
                              r["description"])
    of = "queries" if r["n_queries"] else "chunks"
    languages = {(row[0] or "?"): row[1] for row in stored.language_counts(store, r["id"], of)}
    sources = {}
    if r["n_queries"]:
        sources = {(row[0] or "?"): row[1] for row in stored.source_counts(store, r["id"])}
    collections = [f"{row[0]}@{row[1]}" for row in stored.collection_names(store, r["id"])]
    return DatasetSummary(r["id"], r["name"], r["version"], r["kind"], r["format"],
                          r["created_at"], r["n_queries"], r["n_chunks"], languages, sources,
                          collections, r["description"])


def list_queries(store: Store, ref: str, *, language: str | None = None,
                 source: str | None = None, search: str | None = None,
                 limit: int = 100, offset: int = 0) -> list[dict]:
    """A page of a dataset's queries (id, text, language, source, answers)."""
    rows = stored.query_page(store, resolve(store, ref), language=language, source=source,
                             search=search, limit=limit, offset=offset)
    return [{"query_id": r["query_id"], "text": r["text"], "language": r["language"],
             "source": r["source"], "answers": json.loads(r["answers"])} for r in rows]


def get_query(store: Store, ref: str, query_id: str) -> QueryDetail:
    q = stored.query_row(store, resolve(store, ref), query_id)
    if q is None:
        raise LookupError(f"dataset {ref!r} has no query {query_id!r}")
    pool = [PoolEntry(r["position"], r["chunk_id"], r["title"], r["text"], r["language"],
                      r["support"], bool(r["is_oracle"]), r["support_source"])
            for r in stored.pool_rows(store, q["id"])]
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
    stored.attach_collection(store, dataset_id, collection_id)

