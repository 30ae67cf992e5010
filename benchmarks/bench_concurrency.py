"""Requests in flight: a run at concurrency 4 against the same run at concurrency 1.

1. **llama.cpp server on this CPU.** ``python -m llama_cpp.server`` serving the packaged
   SmolLM2-135M-Instruct on loopback (``--n_threads`` as given, default 2), driven through
   ``models.http.HttpGenerator`` by the run engine over the demo pool (base, oracle, mixed; N
   seeded queries; greedy, ``--max-tokens`` new tokens). llama-cpp-python's server answers one
   request at a time and the CPU is compute-bound, so expect about 1.0×: the gain is on GPUs
   and endpoints that batch. Also reports whether the stored texts are equal item by item.
2. **An endpoint with latency.** The loopback fault server (tests/testkit/fault_server.py)
   answering every request after ``--latency`` seconds, without faults and then with its
   default faults (10% refused, 5% HTTP 500, 5% stalled past the timeout): the engine keeps N
   requests out, so the run should be close to N× faster. The fault rows also report that
   every item ended stored or failed.

Each configuration runs into a fresh workspace (nothing cached), in one process, one after
another; the ratios come from the same process run. ::

    nice .venv/bin/python benchmarks/bench_concurrency.py [--queries 8] [--max-tokens 32]

Writes benchmarks/results/concurrency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from engine.datasets.demo_pool import ensure_demo  # noqa: E402
from engine.runs import RunConfig, execute, plan_run  # noqa: E402
from engine.store import Store  # noqa: E402
from models.http import HttpGenerator  # noqa: E402
from testkit.fault_server import FaultServer  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "concurrency.json"


def one_run(folder: Path, tag: str, generator, queries: int, max_tokens: int,
            concurrency: int) -> dict:
    store = Store(folder / f"{tag}-c{concurrency}.db")
    ensure_demo(store)
    config = RunConfig(dataset="demo", generators=["endpoint"], sample=queries, seed=0,
                       max_tokens=max_tokens, name=f"{tag}-c{concurrency}",
                       concurrency=concurrency, max_errors="50%")
    plan = plan_run(store, config, check_models=False)
    started = time.perf_counter()
    summary = execute(store, plan, generators={"endpoint": generator})
    seconds = time.perf_counter() - started
    texts = [tuple(r) for r in store.query(
        "SELECT ri.system, ri.setting, ri.query_rowid, g.text FROM run_items ri "
        "LEFT JOIN generations g ON g.key = ri.generation_key ORDER BY 1, 2, 3")]
    items = store.query("SELECT COUNT(*), COUNT(DISTINCT system || setting || query_rowid), "
                        "SUM(error IS NOT NULL) FROM run_items")[0]
    store.close()
    return {"concurrency": concurrency, "status": summary.status, "items": summary.total,
            "generated": summary.generated, "failed": summary.errors,
            "stored_rows": items[0], "distinct_rows": items[1],
            "seconds": round(seconds, 3),
            "items_per_s": round(summary.total / seconds, 3) if seconds else None,
            "completion_tokens": summary.completion_tokens, "_texts": texts}


def compare(rows: list[dict]) -> dict:
    base = rows[0]
    out = {"runs": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]}
    for r in rows[1:]:
        out[f"speedup_c{r['concurrency']}_vs_c{base['concurrency']}"] = round(
            base["seconds"] / r["seconds"], 3)
        same = sum(a == b for a, b in zip(base["_texts"], r["_texts"]))
        out[f"same_texts_c{r['concurrency']}"] = f"{same}/{len(base['_texts'])}"
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llama_server(folder: Path, threads: int):
    from models.packaged import packaged_gguf_path

    model = packaged_gguf_path("smollm2-135m-instruct")
    port = free_port()
    log = open(folder / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
         "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
         "--n_threads_batch", str(threads)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama.cpp server exited:\n{(folder / 'server.log').read_text()}")
        try:
            with opener.open(url + "/v1/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("llama.cpp server did not start within 180 s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--skip-llama", action="store_true")
    args = ap.parse_args()
    results: dict = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                 "load_at_start": os.getloadavg()},
                     "queries": args.queries, "max_tokens": args.max_tokens,
                     "settings": ["base", "oracle", "mixed"]}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.skip_llama:
            proc, url = llama_server(folder, args.threads)
            try:
                generator = HttpGenerator(url, timeout=300)
                # llama_cpp.server's /v1/models reports no context window (identity 0)
                generator.n_ctx = 2048
                one_run(folder, "warm", generator, 1, args.max_tokens, 1)   # load, caches
                rows = [one_run(folder, "llama", generator, args.queries, args.max_tokens, n)
                        for n in (1, 4)]
                results["llama_cpp_server"] = {"server": "llama_cpp.server (one request at "
                                                         "a time)",
                                               "threads": args.threads, **compare(rows)}
                print(json.dumps(results["llama_cpp_server"], indent=1), flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        for label, faulty in (("latency", False), ("latency_with_faults", True)):
            with FaultServer(seed=1, latency_s=args.latency, stall_s=3.0) as server:
                server.faulty = faulty
                generator = HttpGenerator(server.url, timeout=1.0)
                rows = [one_run(folder, label, generator, 20, args.max_tokens, n)
                        for n in (1, 4, 8)]
                results[label] = {"latency_s": args.latency, "faults": dict(server.faults),
                                  "peak_requests_answered_at_once": server.peak,
                                  **compare(rows)}
                print(label, json.dumps(results[label], indent=1), flush=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
