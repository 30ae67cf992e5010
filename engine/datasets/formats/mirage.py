"""MIRAGE, the three-file JSON release: ``dataset.json``, ``doc_pool.json``, ``oracle.json``.

- ``dataset.json``: a list of queries ``{source, query_id, query, doc_name, answer, doc_url,
  num_doc_labels}``; ``answer`` is a list of acceptable strings (a single string is accepted).
  ``doc_name``, ``doc_url`` and ``num_doc_labels`` (and any other field) go into the query's
  metadata; the language is English.
- ``doc_pool.json``: a list of ``{mapped_id, doc_name, doc_chunk, support}``, five per query in
  query order: query *i* owns ``doc_pool[5i:5i+5]`` (positions 0..4), and each entry's
  ``mapped_id`` must be that query's ``query_id``. ``support`` comes from the file.
- ``oracle.json``: ``{query_id: {mapped_id, doc_name, doc_chunk, support}}``, the chunk used in
  the oracle setting; the pool entry with the same text is marked ``is_oracle`` (and
  supporting). An oracle whose chunk is not in its query's pool is an error.

**Chunks are deduplicated by text within the dataset.** A chunk's id is ``"h:" +
sha256(text)[:16]`` and its title the ``doc_name`` it first appeared with; a chunk that several
queries' pools share is stored once, with one pool row per query. The reference release has
37,800 pool entries with duplicate texts among them, so a MIRAGE import has fewer chunks than
pool entries: the import report gives both (``pool_entries_in_file`` and ``distinct_chunks``).
Should one query's own five entries repeat a text, that chunk keeps its first position and the
repeat is counted in a warning (the store keeps one row per query and chunk).

A folder (or its ``dataset.json``) with only ``dataset.json`` imports the queries alone, with a
warning that the pool is missing. The building steps here are shared with the parquet form
(:mod:`engine.datasets.formats.mirage_parquet`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from engine.datasets.formats.base import (ChunkRecord, DatasetFormatError, ParsedDataset,
                                          PoolRecord, QueryRecord, answers_list,
                                          load_json, require_str, text_hash)
from engine.jobs import StepCount

FORMAT = "mirage"
POOL_SIZE = 5
DATASET = "dataset.json"
DOC_POOL = "doc_pool.json"
ORACLE = "oracle.json"
LANGUAGE = "en"
QUERY_FIELDS = ("query_id", "query", "answer", "source")
PROGRESS_EVERY = 1000


def _folder(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def detect(path: Path) -> bool:
    if path.is_dir():
        return (path / DATASET).is_file()
    return path.name == DATASET


def files(path: Path) -> list[Path]:
    folder = _folder(path)
    if not path.is_dir() and path.name != DATASET:
        raise DatasetFormatError(path, f"not a MIRAGE file: the MIRAGE layout is a folder "
                                 f"holding {DATASET} (and {DOC_POOL}, {ORACLE}); give "
                                 f"that folder or its {DATASET}")
    if not (folder / DATASET).is_file():
        raise DatasetFormatError(folder, f"no {DATASET} in this folder (MIRAGE layout)")
    return [folder / name for name in (DATASET, DOC_POOL, ORACLE) if (folder / name).is_file()]


def default_name(path: Path) -> str:
    return _folder(path).resolve().name or "mirage"


def _chunk_id_for(text: str) -> str:
    return "h:" + text_hash(text)[:16]


# --------------------------------------------------------------------------- shared building

def _query_label(index: int, record: Any) -> str:
    qid = record.get("query_id") if isinstance(record, dict) else None
    return f"{index} (query_id {qid})" if qid is not None else str(index)


def _build_query(path: Path, label: str, record: Any) -> QueryRecord:
    """One MIRAGE query record (a dataset.json item, or a parquet row less its pool)."""
    if not isinstance(record, dict):
        raise DatasetFormatError(path, f"expected an object, got {type(record).__name__}",
                                 record=label)
    query_id = require_str(path, label, record, "query_id")
    text = require_str(path, label, record, "query")
    if record.get("answer") is None:
        raise DatasetFormatError(path, "missing", record=label, field="answer")
    answers = answers_list(path, label, record["answer"], key="answer")
    source = record.get("source")
    if source is not None and not isinstance(source, str):
        raise DatasetFormatError(path, f"expected a string, got {type(source).__name__}",
                                 record=label, field="source")
    metadata = {k: v for k, v in record.items() if k not in QUERY_FIELDS}
    return QueryRecord(query_id, text, answers, language=LANGUAGE, source=source,
                       metadata=metadata or None)


def build_queries(path: Path, records: list, steps: StepCount | None = None,
                  labels: list[str] | None = None) -> list[QueryRecord]:
    queries = []
    total = len(records)
    for index, record in enumerate(records):
        if steps and index % PROGRESS_EVERY == 0:
            steps(index, total, "queries")
        label = labels[index] if labels else _query_label(index, record)
        queries.append(_build_query(path, label, record))
    ids = [q.query_id for q in queries]
    if len(set(ids)) != len(ids):
        seen: dict[str, int] = {}
        for index, qid in enumerate(ids):
            if qid in seen:
                raise DatasetFormatError(
                    path, f"duplicate query_id {qid!r} (first at record {seen[qid]})",
                    record=labels[index] if labels else _query_label(index, records[index]),
                    field="query_id")
            seen[qid] = index
    return queries


class PoolBuilder:
    """Adds pool entries to a parsed dataset, deduplicating chunks by text across queries.

    ``add(query, entries)`` takes one query's entries in pool order, each as
    ``(record label, {mapped_id, doc_name, doc_chunk, support})``; ``mark_oracle`` marks the
    entry of a query's pool whose text is the oracle's chunk.
    """

    def __init__(self, out: ParsedDataset, field_prefix: str = "", where_hint: str = ""):
        self.out = out
        self.prefix = field_prefix
        self.where_hint = where_hint
        self.chunk_ids: dict[str, str] = {}                 # text -> chunk id
        self.by_query: dict[str, dict[str, PoolRecord]] = {}  # query id -> text -> pool row
        self.entries = 0
        self.repeats_in_pool = 0
        self.support_raised = 0

    def _field(self, name: str) -> str:
        return self.prefix + name

    def add(self, path: Path, query: QueryRecord, entries: Iterable[tuple[str, Any]]) -> None:
        own = self.by_query.setdefault(query.query_id, {})
        for position, (label, entry) in enumerate(entries):
            self.entries += 1
            if not isinstance(entry, dict):
                raise DatasetFormatError(path, f"expected an object, got {type(entry).__name__}",
                                         record=label)
            mapped = entry.get("mapped_id")
            if mapped is None:
                raise DatasetFormatError(path, "missing", record=label,
                                         field=self._field("mapped_id"))
            if str(mapped) != query.query_id:
                raise DatasetFormatError(
                    path, f"is {mapped!r}, but this entry is in the pool of query "
                    f"{query.query_id!r}" + self.where_hint,
                    record=label, field=self._field("mapped_id"))
            text = _require_text(path, label, entry, "doc_chunk", self._field("doc_chunk"))
            support = _support(path, label, entry, self._field("support"))
            title = entry.get("doc_name")
            if title is not None and not isinstance(title, str):
                raise DatasetFormatError(path, f"expected a string, got {type(title).__name__}",
                                         record=label, field=self._field("doc_name"))
            chunk_id = self.chunk_ids.get(text)
            if chunk_id is None:
                chunk_id = _chunk_id_for(text)
                self.chunk_ids[text] = chunk_id
                self.out.chunks.append(ChunkRecord(chunk_id, text, title=title,
                                                   language=LANGUAGE))
            if text in own:
                self.repeats_in_pool += 1
                own[text].support = max(own[text].support, support)
                continue
            row = PoolRecord(query.query_id, chunk_id, position, support)
            own[text] = row
            self.out.pool.append(row)

    def mark_oracle(self, path: Path, label: str, query_id: str, oracle: Any) -> None:
        if not isinstance(oracle, dict):
            raise DatasetFormatError(path, f"expected an object, got {type(oracle).__name__}",
                                     record=label)
        if query_id not in self.by_query:
            raise DatasetFormatError(
                path, f"query {query_id!r} is not in {DATASET}", record=label,
                field=self._field("mapped_id") if self.prefix else None)
        mapped = oracle.get("mapped_id")
        if mapped is not None and str(mapped) != query_id:
            raise DatasetFormatError(path, f"is {mapped!r}, expected {query_id!r}",
                                     record=label, field=self._field("mapped_id"))
        text = _require_text(path, label, oracle, "doc_chunk", self._field("doc_chunk"))
        row = self.by_query[query_id].get(text)
        if row is None:
            raise DatasetFormatError(
                path, f"the oracle chunk is not in query {query_id!r}'s pool: a pool that "
                "points at a missing chunk", record=label, field=self._field("doc_chunk"))
        row.is_oracle = True
        if not row.support:
            self.support_raised += 1
            row.support = 1

    def finish(self, oracles: int | None) -> None:
        out = self.out
        out.counts["pool_entries_in_file"] = self.entries
        out.counts["distinct_chunks"] = len(self.chunk_ids)
        if self.entries:
            out.warnings.append(
                f"{self.entries} pool entries hold {len(self.chunk_ids)} distinct chunk texts: "
                "chunks are stored once per text, with one pool row per query")
        if self.repeats_in_pool:
            out.warnings.append(
                f"{self.repeats_in_pool} pool entries repeat a text already in the same query's "
                "pool and were merged into the first one")
        if self.support_raised:
            out.warnings.append(
                f"{self.support_raised} oracle chunk(s) had support 0 in the pool and were "
                "marked supporting")
        if oracles is not None:
            out.counts["oracles"] = oracles
            missing = sum(1 for q in out.queries if not any(
                r.is_oracle for r in self.by_query.get(q.query_id, {}).values()))
            if missing:
                out.warnings.append(f"{missing} queries have no oracle chunk")


def _require_text(path: Path, label: str, obj: dict, key: str, field: str) -> str:
    value = obj.get(key)
    if value is None:
        raise DatasetFormatError(path, "missing", record=label, field=field)
    if not isinstance(value, str):
        raise DatasetFormatError(path, f"expected a string, got {type(value).__name__}",
                                 record=label, field=field)
    if not value.strip():
        raise DatasetFormatError(path, "empty", record=label, field=field)
    return value


def _support(path: Path, label: str, obj: dict, field: str) -> int:
    value = obj.get("support", 0)
    if value is None:
        value = 0
    if isinstance(value, bool) or value in (0, 1) and isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    raise DatasetFormatError(path, f"expected 0 or 1, got {value!r}", record=label, field=field)


def finish_dataset(out: ParsedDataset, pool: PoolBuilder | None, oracles: int | None,
                   source: str) -> ParsedDataset:
    if pool is not None:
        pool.finish(oracles)
    sources: dict[str, int] = {}
    for q in out.queries:
        sources[q.source or "?"] = sources.get(q.source or "?", 0) + 1
    out.description = (f"MIRAGE ({source}): {len(out.queries)} queries, "
                       f"{len(out.chunks)} distinct chunks; sources "
                       + ", ".join(f"{k} {v}" for k, v in sorted(sources.items(),
                                                                  key=lambda kv: -kv[1])))
    return out


# --------------------------------------------------------------------------- the JSON form

def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    folder = _folder(path)
    out = ParsedDataset(kind="qa", format=FORMAT)
    dataset_path = folder / DATASET
    pool_path, oracle_path = folder / DOC_POOL, folder / ORACLE
    if steps:
        steps(0, None, DATASET)
    records = load_json(dataset_path, list, "a list of query records")
    if not records:
        raise DatasetFormatError(dataset_path, "the list of queries is empty")
    out.queries = build_queries(dataset_path, records, steps)

    has_pool, has_oracle = pool_path.is_file(), oracle_path.is_file()
    if not has_pool:
        if has_oracle:
            raise DatasetFormatError(
                oracle_path, f"{ORACLE} is here but {DOC_POOL} is not: the oracle chunks point "
                "at a pool that is missing")
        out.warnings.append(f"the pool is missing ({DOC_POOL} and {ORACLE} are not in "
                            f"{folder}): only the queries were imported, without chunks")
        return finish_dataset(out, None, None, "queries only")

    if steps:
        steps(0, None, DOC_POOL)
    entries = load_json(pool_path, list, "a list of pool entries")
    expected = POOL_SIZE * len(out.queries)
    if len(entries) != expected:
        raise DatasetFormatError(
            pool_path, f"has {len(entries)} entries; expected {POOL_SIZE} per query of "
            f"{DATASET} ({expected})")
    builder = PoolBuilder(
        out, where_hint=f" (query i owns entries {POOL_SIZE}i..{POOL_SIZE}i+{POOL_SIZE - 1})")
    total = len(out.queries)
    for index, query in enumerate(out.queries):
        if steps and index % PROGRESS_EVERY == 0:
            steps(index, total, DOC_POOL)
        lo = POOL_SIZE * index
        builder.add(pool_path, query,
                    ((str(lo + j), entries[lo + j]) for j in range(POOL_SIZE)))

    oracles = None
    if has_oracle:
        if steps:
            steps(0, None, ORACLE)
        table = load_json(oracle_path, dict, "an object {query_id: oracle}")
        for key, oracle in table.items():
            builder.mark_oracle(oracle_path, repr(key), key, oracle)
        oracles = len(table)
    else:
        out.warnings.append(f"no {ORACLE}: no pool entry is marked as the oracle chunk")
    if steps:
        steps(total, total, "done")
    return finish_dataset(out, builder, oracles, "JSON release")
