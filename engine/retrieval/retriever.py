"""The dense retriever, optionally reranked (MIRAGE, Park et al., §1 "Retrieval").

MIRAGE's RAG mode replaces a query's own five-chunk pool by a retriever's top k over the whole
pool (every query's chunks together), k in {1, 3, 5}; mirage-tui also searches the distractor
collections attached to the dataset (``engine.datasets.catalog.attach_collection``).

Retrieval. As in MIRAGE's reference code the score is the raw dot product of the query and
chunk vectors (no normalisation added here; adapters add e5's "query: "/"passage: " prefixes
themselves), searched exactly with a faiss ``IndexFlatIP`` built from the stored vectors (never
the only copy; kept in an in-process cache). Query vectors are stored too (role 'query'), and
every ranked list in ``retrievals`` under the retriever's label. An optional rerank stage takes
the dense top ``rerank_depth``, reorders them with a ``models`` Reranker and keeps the order.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Iterable, Sequence

import numpy as np

from engine.datasets.catalog import resolve
from engine.datasets.formats.base import text_hash
from engine.jobs import CANCELLED, Job, JobEvent, Progress, Stop
from engine.retrieval.index import (
    PASSAGE,
    QUERY,
    STORE_DEPTH,
    checked_vectors,
    dataset_label,
    index_dataset,
    pending_chunks,
    retriever_label,
    searched_datasets,
)
from engine.store import Store
from engine.store.datasets import chunk_count, chunk_texts, content_hashes, query_texts
from engine.store.indexes import (chunk_vectors, rankings_of_queries, save_rankings,
                                  store_vectors, stored_vectors)

# --------------------------------------------------------------------------- the faiss cache

_INDEX_CACHE: OrderedDict[tuple, tuple] = OrderedDict()
_INDEX_CACHE_SIZE = 4
_INDEX_LOCK = threading.Lock()
_INDEX_STATS = {"builds": 0, "hits": 0}


def index_cache_info() -> dict:
    """Faiss indexes built and reused in this process (and how many are held)."""
    with _INDEX_LOCK:
        return {**_INDEX_STATS, "entries": len(_INDEX_CACHE)}


def clear_index_cache() -> None:
    with _INDEX_LOCK:
        _INDEX_CACHE.clear()


def _build_index(store: Store, ids: Sequence[int], key: str, dim: int):
    """An exact inner-product index over the stored vectors, and the chunk rowid of each row."""
    import faiss

    chunk_rowids, matrix = chunk_vectors(store, ids, key, PASSAGE, dim)
    index = faiss.IndexFlatIP(dim)
    index.add(matrix)
    return index, chunk_rowids


# --------------------------------------------------------------------------- retrieval

class Retriever:
    """Top-k chunks per query for one dataset: dense (raw dot product), optionally reranked.

    ``retrieve`` indexes the pool first when vectors are missing, and serves rankings stored in
    ``retrievals`` under :attr:`label` without calling any model.
    """

    def __init__(self, store: Store, dataset_ref: str, embedder, reranker=None,
                 rerank_depth: int = 20, *, batch_size: int = 64):
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.rerank_depth = rerank_depth if reranker is not None else None
        self.batch_size = batch_size
        self.dataset_id = resolve(store, dataset_ref)
        self.dataset = dataset_label(store, self.dataset_id)
        self._ids = searched_datasets(store, self.dataset_id)
        self._chunk_count: int | None = None
        self._texts: dict[int, str] | None = None
        collections = content_hashes(store, self._ids[1:])
        self.embedder_key = embedder.identity.key()
        self.label = retriever_label(embedder, reranker, self.rerank_depth,
                                     collections=collections)

    @property
    def chunk_count(self) -> int:
        """Chunks searched: the dataset's own plus its attached collections' (fixed when the
        retriever is made, like its label; datasets never change once imported)."""
        if self._chunk_count is None:
            self._chunk_count = chunk_count(self.store, self._ids)
        return self._chunk_count

    def _query_texts(self) -> dict[int, str]:
        if self._texts is None:
            self._texts = query_texts(self.store, self.dataset_id)
        return self._texts

    def query_rowids(self) -> list[int]:
        return list(self._query_texts())

    def retrieve(self, query_rowids: Iterable[int] | None = None, depth: int = 5,
                 progress: Progress | None = None,
                 cancel=None) -> dict[int, list[tuple[int, float]]]:
        """``{query rowid: [(chunk rowid, score), ...] best first}``, ``depth`` long (all the
        dataset's queries when ``query_rowids`` is None). ``progress`` receives the indexing's
        :class:`~engine.jobs.JobEvent` s (kind ``index``) and then retrieval's own (kind
        ``retrieval``; the last one done, cancelled or failed). The queries not stored yet are
        ranked by a :class:`~engine.jobs.Job` (``_Retrieval``); ``cancel`` (an Event or a
        callable) is checked between its steps, and the queries not reached are left out."""
        if not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth must be a positive int, not {depth!r}")
        if self.reranker is not None and depth > self.rerank_depth:
            raise ValueError(f"depth {depth} is deeper than the rerank depth {self.rerank_depth}")
        texts = self._query_texts()
        wanted = list(dict.fromkeys(texts if query_rowids is None else map(int, query_rowids)))
        unknown = [q for q in wanted if q not in texts]
        if unknown:
            raise LookupError(f"{self.dataset} has no query with rowid {unknown[0]}"
                              f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}")
        n_chunks = self.chunk_count
        if n_chunks == 0:
            raise ValueError(f"{self.dataset} has no chunks to search")
        keep = min(self.rerank_depth or max(depth, STORE_DEPTH), n_chunks)
        ranked = {q: r for q, r in self._stored(wanted).items() if len(r) >= min(depth, n_chunks)}
        todo = [q for q in wanted if q not in ranked]
        if todo:
            ranked.update(_Retrieval(self, todo, keep, progress, cancel).run())
        return {q: ranked[q][:depth] for q in wanted if q in ranked}

    def _stored(self, wanted: list[int]) -> dict[int, list[tuple[int, float]]]:
        return {q: [(int(c), float(s)) for c, s in json.loads(ranked)]
                for q, ranked in rankings_of_queries(self.store, self.label, wanted)}

    def _index(self, progress, cancel):
        ids, key = self._ids, self.embedder_key
        cache_key = (str(self.store.path), key, tuple(ids), self.chunk_count)
        with _INDEX_LOCK:
            if cache_key in _INDEX_CACHE:
                _INDEX_CACHE.move_to_end(cache_key)
                _INDEX_STATS["hits"] += 1
                return _INDEX_CACHE[cache_key]
        if pending_chunks(self.store, ids, key):
            report = index_dataset(self.store, self.dataset, self.embedder,
                                   batch_size=self.batch_size, progress=progress, cancel=cancel)
            if report.cancelled:
                return None
        built = _build_index(self.store, ids, key, self.embedder.dim)
        with _INDEX_LOCK:
            _INDEX_STATS["builds"] += 1
            _INDEX_CACHE[cache_key] = built
            while len(_INDEX_CACHE) > _INDEX_CACHE_SIZE:
                _INDEX_CACHE.popitem(last=False)
        return built

    def _query_vectors(self, texts: list[str], job: _Retrieval) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        dim = self.embedder.dim
        have = stored_vectors(self.store, self.embedder_key, QUERY, set(hashes), dim)
        missing = [(h, t) for h, t in dict(zip(hashes, texts)).items() if h not in have]
        job.step(0, len(missing), f"{self.embedder.name}: queries")
        for start in range(0, len(missing), self.batch_size):
            job.check_cancel()
            batch = missing[start:start + self.batch_size]
            vectors = checked_vectors(self.embedder.embed_queries([t for _, t in batch]), len(batch),
                               self.embedder)
            store_vectors(self.store, self.embedder_key, QUERY, [h for h, _ in batch], vectors,
                           None)
            have.update((h, vectors[i]) for i, (h, _) in enumerate(batch))
            job.step(start + len(batch), len(missing), f"{self.embedder.name}: queries",
                     emit=True)
        return np.stack([have[h] for h in hashes]).astype(np.float32) if hashes else \
            np.zeros((0, dim), dtype=np.float32)

    def _rerank(self, query: str, hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
        rowids = [c for c, _ in hits]
        chunk_text = chunk_texts(self.store, rowids)
        order = self.reranker.rerank(query, [chunk_text[c] for c in rowids])
        return [(rowids[i], float(score)) for i, score in order]


class _Retrieval(Job):
    """Ranking the queries :meth:`Retriever.retrieve` found no stored ranking for, as a
    :class:`~engine.jobs.Job`: the pool indexed first when vectors are missing (indexing's own
    job and events), the query vectors embedded and stored batch by batch, then the queries
    searched (and reranked) and their rankings stored a few at a time, each step in its own
    transaction. A cancel stops it between two steps (what is stored stays); its errors reach
    the caller as they are (``raises``). Its events (kind ``retrieval``) count the step's query
    vectors, then the queries ranked; the last one, done or cancelled, counts the queries
    ranked. It returns the rankings it made, ``{query rowid: [(chunk rowid, score), ...]}``."""

    kind = "retrieval"
    raises = True

    def __init__(self, retriever: Retriever, todo: list[int], keep: int, progress, cancel):
        super().__init__(progress, cancel, min_interval=0.0)
        self.retriever, self.todo, self.keep = retriever, todo, keep
        self.out: dict[int, list[tuple[int, float]]] = {}
        self.done, self.total, self.what = 0, len(todo), f"{retriever.label}: retrieving"

    def step(self, done: int, total: int, what: str, emit: bool = False) -> None:
        """Where the job is (``done`` of ``total`` in ``what``); ``emit``: send it on."""
        self.done, self.total, self.what = done, total, what
        if emit:
            self.emit()

    def work(self) -> None:
        r = self.retriever
        found = r._index(self.progress, self.cancel)
        if found is None:           # the indexing was cancelled
            raise Stop("cancelled", CANCELLED)
        index, chunk_rowids = found
        texts = r._query_texts()
        vectors = r._query_vectors([texts[q] for q in self.todo], self)
        step = 4 if r.reranker is not None else 256   # queries per stored transaction
        self.step(0, len(self.todo), f"{r.label}: retrieving")
        for start in range(0, len(self.todo), step):
            self.check_cancel()
            part = self.todo[start:start + step]
            scores, rows = index.search(vectors[start:start + len(part)], self.keep)
            fresh = {}
            for q, s_row, i_row in zip(part, scores, rows):
                hits = [(int(chunk_rowids[i]), float(s)) for i, s in zip(i_row, s_row) if i >= 0]
                fresh[q] = r._rerank(texts[q], hits) if r.reranker is not None else hits
            save_rankings(r.store, r.label,
                          ((q, json.dumps([[c, round(s, 6)] for c, s in hits]))
                           for q, hits in fresh.items()))
            self.out.update({q: [(c, round(s, 6)) for c, s in hits] for q, hits in fresh.items()})
            self.step(start + len(part), len(self.todo), f"{r.label}: retrieving", emit=True)

    def event(self, status: str, message: str | None) -> JobEvent:
        if status != "running":     # the end: the queries ranked of those to rank
            return JobEvent(self.kind, self.retriever.dataset, status, len(self.out),
                            len(self.todo), working_on=f"{self.retriever.label}: retrieving",
                            message=message)
        return JobEvent(self.kind, self.retriever.dataset, status, self.done, self.total,
                        working_on=self.what)

    def summary(self, status: str, message: str | None) -> dict[int, list[tuple[int, float]]]:
        return self.out
