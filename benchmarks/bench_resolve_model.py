"""Resolving a model name, and the time estimate that resolves each generator several times:
the old path (every header read again, the backend found through the whole resolver) against
the new one (:func:`models.catalog._header` keeps each file version's header;
:func:`engine.model_speeds.planned_backend` asks only :func:`models.catalog.resolved_endpoint`),
in the same process, alternating, on the packaged SmolLM2 (a user's GGUF folders as they are).

Figures: milliseconds a call (median of ``--repeat`` calls after one warm-up) of
``resolve_model("smollm2")`` (the short name: the catalog is listed),
``resolve_model("smollm2-135m-instruct")`` (a packaged name: its header only),
``planned_backend``, and ``mirage-tui run --dry-run`` of 20 queries of ``smollm2`` in process
(the plan, what is stored and the estimate: what New run shows too), and each old / new
ratio. ::

    nice .venv/bin/python benchmarks/bench_resolve_model.py [--repeat 15]

Writes benchmarks/results/resolve_model.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "benchmarks" / "results" / "resolve_model.json"
SMOL = "smollm2-135m-instruct"


def _old_planned_backend(name: str) -> tuple[str, int]:
    """planned_backend before: the whole resolver for its first step."""
    from engine.inflight import DEFAULT_ENDPOINT_CONCURRENCY
    from engine.model_speeds import LLAMA_SERVER_SLOTS
    from models.catalog import resolve_model
    from models.host.supervisor import host_backend

    try:
        if resolve_model(name).kind == "endpoint":
            return "http", DEFAULT_ENDPOINT_CONCURRENCY
        if os.environ.get("MIRAGE_HOSTING", "").strip().lower() == "in-process":
            return "llama.cpp", 1
        backend = host_backend()
    except Exception:  # noqa: BLE001
        return "llama.cpp", 1
    return (backend, LLAMA_SERVER_SLOTS) if backend == "llama-server" else (backend, 1)


@contextlib.contextmanager
def old_path():
    """Headers read on every call (no memo) and planned_backend through resolve_model."""
    from engine import model_speeds
    from engine.runs import estimates
    from models import catalog
    from models.gguf import read_gguf

    saved = catalog._header, model_speeds.planned_backend, estimates.planned_backend
    catalog._header = lambda path, **kw: read_gguf(path, **kw)
    model_speeds.planned_backend = estimates.planned_backend = _old_planned_backend
    try:
        yield
    finally:
        catalog._header, model_speeds.planned_backend, estimates.planned_backend = saved


def timed(fn, repeat: int) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` calls, after one."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-resolve-"))
    os.environ.setdefault("MIRAGE_DATA_DIR", str(folder / "data"))
    os.environ.setdefault("MIRAGE_HOSTING", "in-process")

    from engine.datasets.demo_pool import ensure_demo
    from engine.model_speeds import planned_backend
    from engine.store import Store
    from mirage_tui import cli
    from models.catalog import resolve_model

    store = Store(folder / "w.db")
    ensure_demo(store)
    dry_run = ["run", "--db", str(folder / "w.db"), "--dataset", "demo", "--generator",
               "smollm2", "--sample", "20", "--dry-run"]

    def estimate() -> None:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            assert cli.main(dry_run) == 0

    cases = {
        'resolve_model("smollm2")': lambda: resolve_model("smollm2"),
        f'resolve_model("{SMOL}")': lambda: resolve_model(SMOL),
        "planned_backend": lambda: sys.modules["engine.model_speeds"].planned_backend(SMOL),
        "run --dry-run (20 queries)": estimate,
    }
    rows = {}
    for label, fn in cases.items():
        with old_path():
            old = timed(fn, args.repeat)
        new = timed(fn, args.repeat)
        with old_path():                        # again, so a drifting machine shows
            old = min(old, timed(fn, args.repeat))
        rows[label] = {"old_ms": round(old, 3), "new_ms": round(new, 3),
                       "ratio": round(old / new, 1) if new else None}
        print(f"{label:40} old {old:8.2f} ms  new {new:8.2f} ms  ×{old / new:.0f}")
    assert planned_backend(SMOL) == _old_planned_backend(SMOL)
    out = {"benchmark": "bench_resolve_model", "repeat": args.repeat, "rows": rows,
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                       "load": os.getloadavg()[0]},
           "at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
