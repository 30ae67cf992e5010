"""The HTML report's size and build time at 1,000 and 10,000 items.

The runs are those of ``bench_results_scale.py`` (XQuAD en replicated, the engine's own run
path with an instant scripted generator over base, oracle and mixed), built once into its cache
folder and reused. For each: ``run_page`` (what ``report RUN --html`` writes: the report with
1000 resamples, the charts, and the item browser with every item up to
:data:`engine.results.html.ITEM_LIMIT` items and ``ITEM_BYTES`` packed, a seeded sample of
queries beyond), its size in bytes and the items it carries, and the seconds it took.

::

    .venv/bin/python benchmarks/bench_html_report.py [--items 1000,10000]   # docs/measured.md adds 60000

Writes benchmarks/results/html_report.json.
"""

from __future__ import annotations

import argparse
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

from bench_results_scale import build  # noqa: E402
from engine.arena.ratings.page import run_page_with_arenas  # noqa: E402
from engine.results.html import ITEM_LIMIT  # noqa: E402
from engine.results.html.items import ITEM_BYTES  # noqa: E402
from engine.results.html.items import item_data  # noqa: E402
from engine.runs.lookup import load_run  # noqa: E402
from engine.store import Store  # noqa: E402


def measure(db: Path) -> dict:
    store = Store(db)
    started = time.perf_counter()
    html = run_page_with_arenas(store, load_run(store, "scale"))
    seconds = time.perf_counter() - started
    items = item_data(store, load_run(store, "scale"))
    store.close()
    return {"bytes": len(html.encode("utf-8")), "megabytes": round(len(html.encode()) / 2**20, 3),
            "seconds": round(seconds, 2), "items_in_page": items["shown"],
            "items_in_run": items["total"], "sample": items["sample"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="1000,10000")
    parser.add_argument("--cache", type=Path, default=Path(
        os.environ.get("TMPDIR", tempfile.gettempdir())) / "mirage-bench-results-scale")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
           "item_limit": ITEM_LIMIT, "item_bytes": ITEM_BYTES, "runs": {}}
    for n in (int(x) for x in args.items.split(",")):
        db = args.cache / f"scale-{n}.db"
        info = build(db, n)
        result = measure(db)
        out["runs"][str(n)] = {**result, "build_seconds": round(info["build_seconds"], 1)}
        print(f"{n:>6} items: {result['megabytes']:.2f} MB, {result['items_in_page']} items in "
              f"the page, {result['seconds']:.1f} s", flush=True)
    path = ROOT / "benchmarks" / "results" / "html_report.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
