"""The Inspector's text search, sorts and view export at scale.

On the workspace that ``bench_results_scale.py`` builds and caches (XQuAD en replicated, one run
``scale`` of base/oracle/mixed items from an instant scripted generator), times:

- ``migrate_seconds``: opening a copy made before the text-search migration: building the
  trigram indexes over every stored question and response (the back-fill);
- ``search``: one Inspector page of 100 items and the count of matches, for a rare word, a
  phrase with no match, and a phrase most responses hold;
- ``sort``: the first page and the page after it (by key) in each sort, both directions;
- ``export_view_seconds``: exporting a filtered, sorted view (one system's items holding a
  phrase, by response) as JSON lines, and how many items it wrote.

::

    .venv/bin/python benchmarks/bench_inspector_find_sort.py [--items 60000] [--label after]

Writes benchmarks/results/inspector_find_sort_<label>.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_results_scale import build, timed  # noqa: E402
from engine.runs.lookup import load_run  # noqa: E402
from engine.store import Store  # noqa: E402

SEARCHES = {"rare_word": "Denver", "no_match": "no such text", "common_phrase": "answer is"}


def measure(db: Path) -> dict:
    from engine.results.export import export_run
    from engine.results.inspector import SORT_KEYS, count_items_for, item_cursor, items_for

    started = time.perf_counter()
    store = Store(db)
    out: dict = {"migrate_seconds": time.perf_counter() - started, "search": {}, "sort": {}}
    run = load_run(store, "scale")
    for name, text in SEARCHES.items():
        out["search"][name] = {
            "text": text,
            "page_seconds": timed(lambda t=text: items_for(store, run, limit=101, search=t),
                                  repeat=3),
            "count_seconds": timed(lambda t=text: count_items_for(store, run, search=t)),
            "matches": count_items_for(store, run, search=text)}
    for key in SORT_KEYS:
        for descending in (False, True):
            first = items_for(store, run, limit=101, sort=key, descending=descending)
            after = item_cursor(first[-1], key)
            out["sort"][f"{key}{' desc' if descending else ''}"] = {
                "first_page_seconds": timed(lambda k=key, d=descending: items_for(
                    store, run, limit=101, sort=k, descending=d), repeat=2),
                "next_page_seconds": timed(lambda k=key, d=descending, a=after: items_for(
                    store, run, limit=101, sort=k, descending=d, after=a), repeat=2)}
    system = store.query("SELECT system FROM run_items LIMIT 1")[0][0]
    sink = io.StringIO()
    out["export_view_seconds"] = timed(lambda: export_run(
        store, run, format="jsonl", out=sink,
        filters={"system": system, "search": "answer is"}, sort="response"))
    out["export_view_items"] = sink.getvalue().count('"type": "item"')
    store.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=60000)
    parser.add_argument("--label", default="after")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "mirage-bench-results-scale")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    db = args.cache / f"scale-{args.items}.db"
    info = build(db, args.items)
    work = args.cache / f"find-sort-{args.items}.db"
    for stale in args.cache.glob(work.name + "*"):
        stale.unlink()
    work.write_bytes(db.read_bytes())
    result = {"benchmark": "bench_inspector_find_sort", "label": args.label, "build": info,
              **measure(work)}
    for stale in args.cache.glob(work.name + "*"):
        stale.unlink()
    result["machine"] = {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                         "load_average": list(os.getloadavg())}
    out = ROOT / "benchmarks" / "results" / f"inspector_find_sort_{args.label}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
