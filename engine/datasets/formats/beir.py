"""BEIR (and MIRACL in BEIR layout): a folder with ``corpus.jsonl`` (``{_id or docid, title,
text}``), ``queries.jsonl`` (``{_id or query_id, text}``) and ``qrels/*.tsv``
(``query-id<TAB>corpus-id<TAB>score``, with or without that header line).

Every qrels file is read (test, dev, train...); the split names a query appears in go into its
metadata (``splits``). A qrels line is a relevance label, not a place in a ranked pool: its pool
row has ``position`` NULL, ``support`` 1 when the score is above 0 (else 0) and
``support_source='label'``. A label whose query or document is not in the folder's files is an
error; queries without any label are kept, and counted in a warning. BEIR has no short answers,
so ``answers`` is empty.

The language is not in the files: it is detected with ``langid`` on up to 200 corpus texts
(majority vote) and the import says so in a warning; without langid it is left empty.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from engine.datasets.formats.base import (ChunkRecord, DatasetFormatError, ParsedDataset,
                                          PoolRecord, QueryRecord, iter_jsonl,
                                          read_text, require_str)
from engine.jobs import StepCount

FORMAT = "beir"
CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = "qrels"
LANGID_SAMPLE = 200
_HEADER_IDS = {"query-id", "query_id", "qid", "query"}


def _folder(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def detect(path: Path) -> bool:
    folder = path if path.is_dir() else (path.parent if path.name == CORPUS else None)
    if folder is None or not (folder / CORPUS).is_file():
        return False
    return (folder / QUERIES).is_file() or (folder / QRELS).is_dir()


def _qrels_files(folder: Path) -> list[Path]:
    qrels = folder / QRELS
    return sorted(p for p in qrels.glob("*.tsv") if p.is_file()) if qrels.is_dir() else []


def files(path: Path) -> list[Path]:
    folder = _folder(path)
    if not (folder / CORPUS).is_file():
        raise DatasetFormatError(folder, f"no {CORPUS} in this folder (BEIR layout)")
    found = [folder / CORPUS]
    if (folder / QUERIES).is_file():
        found.append(folder / QUERIES)
    return found + _qrels_files(folder)


def default_name(path: Path) -> str:
    return _folder(path).resolve().name or "beir"


def _id(path: Path, where: str, obj: dict, keys: tuple[str, ...]) -> str:
    for key in keys:
        if obj.get(key) is not None:
            return require_str(path, where, obj, key)
    raise DatasetFormatError(path, "missing", record=where, field=" or ".join(keys))


def _records(path: Path, id_keys: tuple[str, ...], what: str) -> Iterator[tuple[str, str, dict]]:
    """``(where, id, object)`` for each line of a JSON-lines file, its id read from the first of
    ``id_keys`` it has; an id seen before is refused."""
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        record_id = _id(path, f"at line {lineno}", obj, id_keys)
        where = f"at line {lineno} (id {record_id})"
        if record_id in seen:
            raise DatasetFormatError(path, f"duplicate {what} id {record_id!r} (first at "
                                     f"line {seen[record_id]})", record=where, field="_id")
        seen[record_id] = lineno
        yield where, record_id, obj


def _optional_str(path: Path, where: str, obj: dict, key: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise DatasetFormatError(path, f"expected a string, got {type(value).__name__}",
                                 record=where, field=key)
    return value


def detect_language(texts: list[str]) -> str | None:
    """Majority language of the texts by langid, or None when langid is not installed."""
    try:
        import langid
    except ImportError:
        return None
    votes = Counter(langid.classify(text[:2000])[0] for text in texts if text.strip())
    return votes.most_common(1)[0][0] if votes else None


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    folder = _folder(path)
    out = ParsedDataset(kind="qa", format=FORMAT)
    corpus_path, queries_path = folder / CORPUS, folder / QUERIES

    if steps:
        steps(0, None, CORPUS)
    empty = 0
    for where, doc_id, obj in _records(corpus_path, ("_id", "docid"), "document"):
        title = _optional_str(corpus_path, where, obj, "title")
        text = _optional_str(corpus_path, where, obj, "text")
        if text is None:
            raise DatasetFormatError(corpus_path, "missing", record=where, field="text")
        if not text.strip():
            empty += 1
        extra = {k: v for k, v in obj.items() if k not in ("_id", "docid", "title", "text")}
        out.chunks.append(ChunkRecord(doc_id, text, title=title or None,
                                      metadata=extra or None))
    if not out.chunks:
        raise DatasetFormatError(corpus_path, "no documents (only blank lines)")
    if empty:
        out.warnings.append(f"{CORPUS}: {empty} documents have an empty text")

    if queries_path.is_file():
        if steps:
            steps(0, None, QUERIES)
        for where, qid, obj in _records(queries_path, ("_id", "query_id"), "query"):
            text = require_str(queries_path, where, obj, "text")
            extra = {k: v for k, v in obj.items() if k not in ("_id", "query_id", "text")}
            out.queries.append(QueryRecord(qid, text, [], metadata=extra))
    qrels = _qrels_files(folder)
    if not out.queries:
        if qrels:
            raise DatasetFormatError(qrels[0], f"relevance labels but no {QUERIES} (or an "
                                     "empty one) to hold their queries")
        out.kind = "collection"
        out.warnings.append(f"no {QUERIES}: imported as a collection of documents only")

    if qrels:
        _read_qrels(out, qrels, steps)
    elif out.queries:
        out.warnings.append(f"no {QRELS}/*.tsv: the queries have no relevance labels")

    if steps:
        steps(0, None, "language")
    sample = [c.text for c in out.chunks if c.text.strip()][:LANGID_SAMPLE]
    language = detect_language(sample)
    if language:
        out.warnings.append(f"language detected as {language} by langid "
                            f"(majority of {len(sample)} documents)")
    else:
        out.warnings.append("langid is not installed: the language is left empty")
    for chunk in out.chunks:
        chunk.language = language
    for query in out.queries:
        query.language = language
        query.metadata = query.metadata or None
    out.description = (f"BEIR folder {folder.name}: {len(out.queries)} queries, "
                       f"{len(out.chunks)} documents, {len(out.pool)} labels")
    if steps:
        steps(1, 1, "done")
    return out


def _read_qrels(out: ParsedDataset, paths: list[Path], steps: StepCount | None) -> None:
    doc_ids = {c.chunk_id for c in out.chunks}
    queries = {q.query_id: q for q in out.queries}
    rows: dict[tuple[str, str], PoolRecord] = {}
    graded = 0
    per_split: dict[str, int] = {}
    for index, path in enumerate(paths):
        if steps:
            steps(index, len(paths), f"{QRELS}/{path.name}")
        split = path.stem
        count = 0
        for lineno, line in enumerate(read_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            where = f"at line {lineno}"
            cols = line.rstrip("\r").split("\t")
            if len(cols) == 1:
                cols = line.split()
            if lineno == 1 and cols[0].strip().lower() in _HEADER_IDS:
                continue  # the header line
            if len(cols) == 4:  # TREC style: query-id, iteration, corpus-id, score
                cols = [cols[0], cols[2], cols[3]]
            if len(cols) != 3:
                raise DatasetFormatError(path, f"expected 3 tab-separated columns (query-id, "
                                         f"corpus-id, score), got {len(cols)}", record=where)
            qid, doc_id, raw = (c.strip() for c in cols)
            try:
                score = int(float(raw))
            except ValueError:
                raise DatasetFormatError(path, f"expected a number, got {raw!r}", record=where,
                                         field="score") from None
            if qid not in queries:
                raise DatasetFormatError(path, f"query id {qid!r} is not in {QUERIES}: a label "
                                         "that points at a missing query", record=where,
                                         field="query-id")
            if doc_id not in doc_ids:
                raise DatasetFormatError(path, f"corpus id {doc_id!r} is not in {CORPUS}: a "
                                         "pool that points at a missing chunk", record=where,
                                         field="corpus-id")
            graded += score > 1
            support = int(score > 0)
            key = (qid, doc_id)
            if key in rows:
                rows[key].support = max(rows[key].support, support)
            else:
                rows[key] = PoolRecord(qid, doc_id, None, support, support_source="label")
                out.pool.append(rows[key])
            meta: dict[str, Any] = queries[qid].metadata
            splits = meta.setdefault("splits", [])
            if split not in splits:
                splits.append(split)
            count += 1
        per_split[split] = count
        out.counts[f"qrels_{split}"] = count
    unlabelled = sum(1 for q in out.queries if not q.metadata.get("splits"))
    if unlabelled:
        out.warnings.append(f"{unlabelled} queries have no relevance label in {QRELS}/ "
                            "(kept, but they cannot be scored for retrieval)")
    out.counts["queries_without_qrels"] = unlabelled
    if graded:
        out.warnings.append(f"{graded} labels have a graded score above 1: stored as support 1")
