"""Small MIRAGE sets: the first real queries, made-up pools and oracles for them, and writers
for the three-file folder and the hub's one-parquet form."""

from __future__ import annotations

import json
from pathlib import Path

from testkit.paths import SHARED_DATA


def mirage_records(n: int = 4) -> list[dict]:
    """The first n real MIRAGE queries (from ../shared/data/mirage/dataset.json)."""
    with (SHARED_DATA / "mirage" / "dataset.json").open(encoding="utf-8") as fh:
        return json.load(fh)[:n]


SHARED_CHUNK = "Shared topic\nA made-up paragraph that the pools of queries 0 and 1 both hold."


def mirage_pool(records: list[dict]) -> tuple[list[dict], dict[str, dict]]:
    """Made-up pools (five per query, query order) and oracles for the given queries.

    Entry 0 of each pool is the oracle and supports (it contains the first answer); entry 2
    supports too; entry 4 of queries 0 and 1 is the same text (one chunk, two pool rows).
    """
    pool, oracle = [], {}
    for i, rec in enumerate(records):
        name, qid = rec["doc_name"], rec["query_id"]
        answer = rec["answer"][0] if isinstance(rec["answer"], list) else rec["answer"]
        for j in range(5):
            if j == 4 and i < 2:
                text = SHARED_CHUNK
            elif j == 0:
                text = f"{name}\n{name} is known as a {answer} (made-up oracle text)."
            else:
                text = f"{name}\nMade-up distractor paragraph {j} for query {i}."
            pool.append({"mapped_id": qid, "doc_name": name, "doc_chunk": text,
                         "support": int(j in (0, 2))})
        oracle[qid] = dict(pool[5 * i])
    return pool, oracle


def write_mirage(folder: Path, records: list[dict] | None = None, pool=None, oracle=None,
                 *, with_pool: bool = True) -> Path:
    """A MIRAGE three-file folder (dataset.json, doc_pool.json, oracle.json)."""
    records = mirage_records() if records is None else records
    made_pool, made_oracle = mirage_pool(records)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dataset.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    if with_pool:
        (folder / "doc_pool.json").write_text(
            json.dumps(made_pool if pool is None else pool), encoding="utf-8")
        (folder / "oracle.json").write_text(
            json.dumps(made_oracle if oracle is None else oracle), encoding="utf-8")
    return folder


def write_mirage_parquet(path: Path, records: list[dict] | None = None, pool=None,
                         oracle=None) -> Path:
    """The same data in the hub's one-parquet form: query fields + doc_pool + oracle."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = mirage_records() if records is None else records
    made_pool, made_oracle = mirage_pool(records)
    pool = made_pool if pool is None else pool
    oracle = made_oracle if oracle is None else oracle
    rows = []
    for i, rec in enumerate(records):
        entries = pool[5 * i:5 * i + 5]
        rows.append({**rec,
                     "doc_pool": {k: [e[k] for e in entries]
                                  for k in ("mapped_id", "doc_name", "doc_chunk", "support")},
                     "oracle": oracle.get(rec["query_id"])})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path
