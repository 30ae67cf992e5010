"""MIRAGE, the single-parquet form of the dataset hub (``data/train-00000-of-00001.parquet``).

Each row is one query (``query_id, query, answer, source, doc_name, doc_url, num_doc_labels``)
plus ``doc_pool`` (a struct of parallel lists ``mapped_id, doc_name, doc_chunk, support``: the
query's pool in order) and ``oracle`` (a struct of the same fields, as scalars). The result is
the same as the JSON release's (:mod:`engine.datasets.formats.mirage`, whose building steps this
reuses): chunks deduplicated by text, pool positions from the list order, the oracle marked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from engine.datasets.formats import mirage
from engine.datasets.formats.base import DatasetFormatError, ParsedDataset, nonempty_size
from engine.jobs import StepCount

FORMAT = "mirage-parquet"
MAGIC = b"PAR1"
POOL_FIELDS = ("mapped_id", "doc_name", "doc_chunk", "support")
_SHARD = re.compile(r"^(train|test|validation|dev)-\d+-of-\d+$")


def _schema_names(path: Path) -> list[str] | None:
    try:
        import pyarrow.parquet as pq

        with path.open("rb") as fh:
            if fh.read(4) != MAGIC:
                return None
        return list(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - detection only: anything unreadable is "not mine"
        return None


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".parquet":
        return False
    names = _schema_names(path)
    return bool(names) and "query_id" in names and "doc_pool" in names


def files(path: Path) -> list[Path]:
    if path.is_dir():
        raise DatasetFormatError(path, "expected a .parquet file, got a folder")
    return [path]


def default_name(path: Path) -> str:
    if not _SHARD.match(path.stem):
        return path.stem
    parent = path.resolve().parent
    if parent.name == "data" and parent.parent.name:
        parent = parent.parent
    return parent.name or "mirage"


def _read_rows(path: Path) -> list[dict]:
    size = nonempty_size(path)
    with path.open("rb") as fh:
        head = fh.read(4)
        fh.seek(max(0, size - 4))
        tail = fh.read(4)
    if head != MAGIC or tail != MAGIC:
        raise DatasetFormatError(path, "not a parquet file (no PAR1 magic bytes at its start "
                                 "and end)")
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise DatasetFormatError(path, f"not a readable parquet file: {exc}") from None
    missing = [name for name in ("query_id", "query", "doc_pool") if name not in
               table.column_names]
    if missing:
        raise DatasetFormatError(path, "not the MIRAGE parquet layout: no column(s) "
                                 + ", ".join(missing), field=missing[0])
    if table.num_rows == 0:
        raise DatasetFormatError(path, "the table has no rows")
    return table.to_pylist()


def _pool_entries(path: Path, label: str, value: Any) -> list[tuple[str, dict]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise DatasetFormatError(path, f"expected a struct of lists, got {type(value).__name__}",
                                 record=label, field="doc_pool")
    columns = {}
    for name in POOL_FIELDS:
        column = value.get(name)
        if column is None:
            if name in ("doc_name", "support"):
                continue
            raise DatasetFormatError(path, "missing", record=label, field=f"doc_pool.{name}")
        if not isinstance(column, list):
            raise DatasetFormatError(path, f"expected a list, got {type(column).__name__}",
                                     record=label, field=f"doc_pool.{name}")
        columns[name] = column
    lengths = {name: len(column) for name, column in columns.items()}
    if len(set(lengths.values())) > 1:
        raise DatasetFormatError(
            path, "the parallel lists differ in length ("
            + ", ".join(f"{k} {v}" for k, v in lengths.items()) + ")",
            record=label, field="doc_pool")
    n = next(iter(lengths.values()))
    return [(f"{label}, doc_pool[{j}]", {name: columns[name][j] for name in columns})
            for j in range(n)]


def parse(path: Path, steps: StepCount | None = None) -> ParsedDataset:
    out = ParsedDataset(kind="qa", format=FORMAT)
    if steps:
        steps(0, None, path.name)
    rows = _read_rows(path)
    labels = [f"row {i}" + (f" (query_id {r.get('query_id')})" if r.get("query_id") is not None
                            else "") for i, r in enumerate(rows)]
    records = [{k: v for k, v in row.items() if k not in ("doc_pool", "oracle")} for row in rows]
    out.queries = mirage.build_queries(path, records, steps, labels=labels)

    builder = mirage.PoolBuilder(out)
    total = len(rows)
    sizes: dict[int, int] = {}
    for index, (query, row) in enumerate(zip(out.queries, rows)):
        if steps and index % mirage.PROGRESS_EVERY == 0:
            steps(index, total, "doc_pool")
        entries = _pool_entries(path, labels[index], row.get("doc_pool"))
        sizes[len(entries)] = sizes.get(len(entries), 0) + 1
        builder.prefix = "doc_pool."
        builder.add(path, query, entries)
    odd = {size: count for size, count in sizes.items() if size != mirage.POOL_SIZE}
    if odd:
        out.warnings.append("pools not of MIRAGE's size 5: " + ", ".join(
            f"{count} of size {size}" for size, count in sorted(odd.items())))

    oracles = 0
    has_oracle_column = "oracle" in rows[0]
    builder.prefix = "oracle."
    for index, (query, row) in enumerate(zip(out.queries, rows)):
        oracle = row.get("oracle")
        if oracle is None or (isinstance(oracle, dict) and oracle.get("doc_chunk") is None
                              and oracle.get("mapped_id") is None):
            continue
        builder.mark_oracle(path, labels[index], query.query_id, oracle)
        oracles += 1
    if not has_oracle_column:
        out.warnings.append("no oracle column: no pool entry is marked as the oracle chunk")
    if steps:
        steps(total, total, "done")
    return mirage.finish_dataset(out, builder, oracles if has_oracle_column else None,
                                 "parquet")
