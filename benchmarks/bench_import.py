"""Import throughput: XQuAD (8 languages) + the Wikipedia summaries, and the database size.

Baseline, in the same process: a bare loop that json-loads the same files and inserts the same
texts with plain sqlite3 in one transaction (no validation, no pools, no hashing). The ratio
says what the importer's checks, pools and provenance cost on top of the raw I/O.

    .venv/bin/python benchmarks/bench_import.py [--data ../shared/data] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.datasets.importing import import_path  # noqa: E402
from engine.store import Store  # noqa: E402


def engine_import(data: Path, workdir: Path) -> tuple[float, int, int]:
    db = workdir / f"engine-{time.monotonic_ns()}.db"
    store = Store(db)
    started = time.perf_counter()
    xquad = import_path(store, data / "xquad")
    wiki = import_path(store, data / "wiki")
    seconds = time.perf_counter() - started
    records = (xquad.counts["queries"] + xquad.counts["chunks"] + xquad.counts["pool_entries"]
               + wiki.counts["chunks"])
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return seconds, records, db.stat().st_size


def bare_import(data: Path, workdir: Path) -> float:
    db = workdir / f"bare-{time.monotonic_ns()}.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE q (id TEXT, text TEXT)")
    conn.execute("CREATE TABLE c (id TEXT, text TEXT)")
    started = time.perf_counter()
    conn.execute("BEGIN")
    for path in sorted((data / "xquad").glob("xquad.*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for a, article in enumerate(doc["data"]):
            for p, para in enumerate(article["paragraphs"]):
                conn.execute("INSERT INTO c VALUES (?, ?)", (f"{a}/{p}", para["context"]))
                conn.executemany("INSERT INTO q VALUES (?, ?)",
                                 ((qa["id"], qa["question"]) for qa in para["qas"]))
    for path in sorted((data / "wiki").glob("summaries_*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        conn.executemany("INSERT INTO c VALUES (?, ?)",
                         ((k, v.get("extract", "")) for k, v in doc.items()))
    conn.execute("COMMIT")
    seconds = time.perf_counter() - started
    conn.close()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    engine_times, bare_times = [], []
    records = size = 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for _ in range(args.repeats):  # alternate, so drift hits both alike
            seconds, records, size = engine_import(args.data, workdir)
            engine_times.append(seconds)
            bare_times.append(bare_import(args.data, workdir))
    engine_s, bare_s = statistics.median(engine_times), statistics.median(bare_times)
    result = {
        "records": records,
        "engine_seconds": round(engine_s, 3),
        "engine_records_per_s": round(records / engine_s),
        "bare_seconds": round(bare_s, 3),
        "engine_over_bare_time": round(engine_s / bare_s, 2),
        "db_bytes": size,
        "db_mib": round(size / 2**20, 1),
        "repeats": args.repeats,
    }
    print("import: XQuAD (8 languages) + Wikipedia summaries")
    print(f"  records (queries + chunks + pool rows): {records:,}")
    print(f"  engine: {engine_s:.2f} s  ({result['engine_records_per_s']:,} records/s)")
    print(f"  bare json+sqlite loop: {bare_s:.2f} s  -> engine/bare time ratio "
          f"{result['engine_over_bare_time']}")
    print(f"  database size: {result['db_mib']} MiB")
    out = ROOT / "benchmarks" / "results" / "import.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
